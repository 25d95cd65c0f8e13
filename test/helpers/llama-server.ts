/**
 * A real llama.cpp `llama-server` as a child process on 127.0.0.1, for the real-engine tests. The binary and its
 * tiny Llama-3-tokenizer model come from test/engines/llamacpp/build.sh, which caches them outside the repository.
 */
import type { Subprocess } from "bun";
import { test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./run-cli.ts";

export const LLAMA_BUILD_SCRIPT = "test/engines/llamacpp/build.sh";

/** Files of one build (see build.sh for the layout). */
export interface LlamaBuild {
  dir: string;
  server: string;
  model: string;
  /** The Llama-3 HF tokenizer.json whose vocabulary and merges are the GGUF's. */
  tokenizer: string;
}

/** The build: `$WARMBENCH_LLAMA_DIR`, else the cache folder that build.sh prints (the version pin lives there only). */
export function llamaBuild(): LlamaBuild {
  const dir = process.env.WARMBENCH_LLAMA_DIR || printBuildDir();
  return {
    dir,
    server: join(dir, "bin", "llama-server"),
    model: join(dir, "model", "tiny-llama3tok.gguf"),
    tokenizer: join(dir, "model", "tokenizer.json"),
  };
}

function printBuildDir(): string {
  const r = Bun.spawnSync(["bash", join(ROOT, LLAMA_BUILD_SCRIPT), "--print-dir"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${LLAMA_BUILD_SCRIPT} --print-dir failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/** Whether the build's server, model and tokenizer are all there. */
export function llamaBuildPresent(build: LlamaBuild = llamaBuild()): boolean {
  return existsSync(build.server) && existsSync(build.model) && existsSync(build.tokenizer);
}

let missingReported = false;

/**
 * For a real-engine test file: true when its tests must be skipped because the build is missing. Outside CI that
 * prints one line naming build.sh (once per `bun test` process); with CI=true it registers a failing test instead,
 * so a CI machine that lost its build can never pass by skipping.
 */
export function skipWithoutLlamaBuild(): boolean {
  const build = llamaBuild();
  if (llamaBuildPresent(build)) return false;
  const where = process.env.WARMBENCH_LLAMA_DIR ? `${build.dir} (WARMBENCH_LLAMA_DIR)` : build.dir;
  const message = `llama.cpp build not found in ${where}: run \`bash ${LLAMA_BUILD_SCRIPT}\` (5–10 min on 2 cores)`;
  if (process.env.CI === "true") {
    test("the llama.cpp build is present (CI=true)", () => {
      throw new Error(message);
    });
  } else if (!missingReported) {
    missingReported = true;
    console.warn(`skipping the real llama-server tests: ${message}`);
  }
  return true;
}

/** How to start the server; defaults in LLAMA_SERVER_DEFAULTS. */
export interface LlamaServerOptions {
  /** `-np`: parallel slots, each with its own prompt (KV) cache. */
  slots: number;
  /** Context per slot; `-c` is this times `slots` (llama.cpp splits `-c` evenly when `-np` is given). */
  ctxTokensPerSlot: number;
  /** The host-RAM prompt cache: true keeps llama.cpp's default (`--cache-ram` 8192 MiB), false passes `--cache-ram 0`. */
  cacheRam: boolean;
  /** Pass `--slot-save-path` (a fresh temp folder): `POST /slots/{i}?action=erase` answers 501 without it. */
  slotSavePath: boolean;
  /** `--metrics` (Prometheus `/metrics`; off by default in llama.cpp). */
  metrics: boolean;
  /** `-t`: CPU threads. */
  threads: number;
  startTimeoutMs: number;
  extraArgs: string[];
}

const LLAMA_SERVER_DEFAULTS: LlamaServerOptions = {
  slots: 1,
  ctxTokensPerSlot: 1024,
  cacheRam: false,
  slotSavePath: true,
  metrics: false,
  threads: 2,
  startTimeoutMs: 60_000,
  extraArgs: [],
};

/** A running llama-server. */
export interface LlamaServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  args: string[];
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** The last ~64 KiB of its stdout + stderr, for failure messages. */
  log(): string;
  /** SIGTERM, SIGKILL after 10 s; waits for the exit and removes the slot-save folder. Returns the exit code. */
  stop(): Promise<number | null>;
}

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const LOG_KEEP_CHARS = 64 * 1024;
const STOP_GRACE_MS = 10_000;
const HEALTH_POLL_MS = 50;

/** Starts llama-server on 127.0.0.1 with `--port 0` (the kernel picks; the log names it) and waits for `/health` 200. */
export async function startLlamaServer(options: Partial<LlamaServerOptions> = {}): Promise<LlamaServer> {
  const opts = { ...LLAMA_SERVER_DEFAULTS, ...options };
  const build = llamaBuild();
  const saveDir = opts.slotSavePath ? mkdtempSync(join(tmpdir(), "warmbench-llama-slots-")) : null;
  const args = [
    "-m",
    build.model,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "-np",
    String(opts.slots),
    "-c",
    String(opts.slots * opts.ctxTokensPerSlot),
    "-t",
    String(opts.threads),
    ...(opts.cacheRam ? [] : ["--cache-ram", "0"]),
    ...(saveDir ? ["--slot-save-path", saveDir] : []),
    ...(opts.metrics ? ["--metrics"] : []),
    ...opts.extraArgs,
  ];
  const proc = Bun.spawn([build.server, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let logText = "";
  let onLog = (): void => {};
  const drain = async (stream: ReadableStream<Uint8Array>): Promise<void> => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      logText = (logText + decoder.decode(chunk, { stream: true })).slice(-LOG_KEEP_CHARS);
      onLog();
    }
  };
  void drain(proc.stdout).catch(() => {});
  void drain(proc.stderr).catch(() => {});

  const stop = async (): Promise<number | null> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_GRACE_MS);
      await proc.exited;
      clearTimeout(timer);
    }
    if (saveDir) rmSync(saveDir, { recursive: true, force: true });
    return proc.exitCode;
  };
  const fail = async (why: string): Promise<never> => {
    await stop();
    throw new Error(`llama-server ${why}\n${build.server} ${args.join(" ")}\n--- log tail ---\n${logText.slice(-4000)}`);
  };

  const deadline = Date.now() + opts.startTimeoutMs;
  const url = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), opts.startTimeoutMs);
    onLog = () => {
      const match = LISTENING.exec(logText);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    void proc.exited.then(() => {
      clearTimeout(timer);
      resolve(LISTENING.exec(logText)?.[1] ?? null);
    });
  });
  onLog = () => {};
  if (url === null) return fail(proc.exitCode === null ? "printed no listening line in time" : `exited with ${proc.exitCode}`);

  // It listens before the model is loaded: /health answers 503 "Loading model" until then.
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) return fail(`exited with ${proc.exitCode ?? proc.signalCode}`);
    const status = await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) return fail(`was not healthy in time (last /health status ${status})`);
    await Bun.sleep(HEALTH_POLL_MS);
  }
  return { url, args, proc, log: () => logText, stop };
}
