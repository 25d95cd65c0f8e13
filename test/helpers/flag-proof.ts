/**
 * For the every-flag test: runs one command line of the compiled binary against a mock process behind a recording
 * proxy (request bodies kept), in its own temp dir, and returns what can show that a flag did something: the
 * requests, stdout, stderr, the exit code and the files written.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "./mock-process.ts";
import { startRecordingProxy, type Intercept, type ProxiedRequest } from "./recording-proxy.ts";
import { BINARY, runCli, type CliResult } from "./run-cli.ts";

export interface Observation {
  code: number;
  stdout: string;
  stderr: string;
  requests: ProxiedRequest[];
  dir: string;
  wallMs: number;
  /** The JSON lines of a file in `dir` ([] when it is missing). */
  lines(file: string): Record<string, any>[];
}

export interface Probe {
  /** The command line; `{url}`, `{port}` and `{dir}` are replaced, and `{url2}`: a second address of the same mock (a second replica). */
  args: string[];
  /** Flags of `warmbench mock` for the server this line talks to. */
  server?: string[];
  intercept?: Intercept;
  /** The line's environment, or a function of its dir that makes it (e.g. a fresh cache dir). */
  env?: Record<string, string> | ((dir: string) => Promise<Record<string, string>>);
  /** Writes the files the line reads, in its dir, before it runs. */
  setup?: (dir: string) => void;
  /**
   * Run under a pseudo-terminal (util-linux `script`), as a user at a terminal does: stderr is a TTY, so the
   * progress line is drawn; stdout and stderr then arrive merged in `stdout`.
   */
  tty?: boolean;
}

const mocks = new Map<string, Promise<MockProcess>>();

/** One mock process per distinct server flag list, kept for the whole file (stop with `stopMocks`). */
export function mockFor(server: string[]): Promise<MockProcess> {
  const key = server.join("\u0000");
  if (!mocks.has(key)) mocks.set(key, startMockProcess(server));
  return mocks.get(key)!;
}

export async function stopMocks(): Promise<void> {
  for (const m of mocks.values()) await (await m).stop();
  mocks.clear();
}

export function readLines(path: string): Record<string, any>[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l.replaceAll("Infinity", "1e999")));
}

/** One shell word (for the `script -c` command line). */
const shellWord = (a: string): string => `'${a.replaceAll("'", "'\\''")}'`;

async function runOnTty(args: string[], env: Record<string, string> | undefined): Promise<CliResult> {
  const command = [BINARY, ...args].map(shellWord).join(" ");
  // -e: the command's exit code; -q: no "Script started" lines; /dev/null: no typescript file.
  return runCommand(["script", "-qec", command, "/dev/null"], env);
}

async function runCommand(argv: string[], env: Record<string, string> | undefined): Promise<CliResult> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 60_000 });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const cachedBases = new Map<string, Promise<Observation>>();

/**
 * `observe`, shared between the entries whose base line is the same command against the same server: a probe
 * without setup, intercept or env is run once per file (its files are read back, never written by a proof).
 */
export function observeBase(probe: Probe): Promise<Observation> {
  if (probe.setup !== undefined || probe.intercept !== undefined || probe.env !== undefined) return observe(probe);
  const key = JSON.stringify([probe.args, probe.server ?? [], probe.tty === true]);
  if (!cachedBases.has(key)) cachedBases.set(key, observe(probe));
  return cachedBases.get(key)!;
}

export async function observe(probe: Probe): Promise<Observation> {
  const mock = await mockFor(probe.server ?? []);
  const proxy = startRecordingProxy(mock.url, probe.intercept);
  const dir = mkdtempSync(join(tmpdir(), "warmbench-flag-"));
  probe.setup?.(dir);
  // A second replica: another recording proxy in front of the same mock, at an address of its own.
  const second = probe.args.some((a) => a.includes("{url2}")) ? startRecordingProxy(mock.url, probe.intercept) : null;
  const port = new URL(proxy.url).port;
  const args = probe.args.map((a) =>
    a
      .replaceAll("{url2}", second?.url ?? "")
      .replaceAll("{url}", proxy.url)
      .replaceAll("{port}", port)
      .replaceAll("{dir}", dir),
  );
  const t0 = performance.now();
  try {
    const env = typeof probe.env === "function" ? await probe.env(dir) : probe.env;
    const r = probe.tty === true ? await runOnTty(args, env) : await runCli(args, { env, timeoutMs: 60_000 });
    const requests = [...proxy.requests, ...(second?.requests ?? [])];
    return { ...r, requests, dir, wallMs: performance.now() - t0, lines: (file) => readLines(join(dir, file)) };
  } finally {
    await proxy.stop();
    await second?.stop();
  }
}

/** `base` with `extra`'s flags replacing the same flags of `base` (value included) and `drop`'s removed. */
export function withFlags(base: string[], extra: string[], drop: string[] = []): string[] {
  const given = new Set(extra.filter((a) => a.startsWith("--")));
  const out: string[] = [];
  for (let i = 0; i < base.length; i++) {
    const a = base[i]!;
    if (a.startsWith("--") && (given.has(a) || drop.includes(a))) {
      if (base[i + 1] !== undefined && !base[i + 1]!.startsWith("--")) i++;
      continue;
    }
    out.push(a);
  }
  return [...out, ...extra];
}

/** What went out, without what differs from run to run (request ids): method, path and body per request. */
export function sentSignature(o: Observation): string[] {
  // Scrapes of /metrics (the telemetry study's timer, --scrape-interval) follow the clock, not the flags: left out.
  return o.requests
    .filter((r) => !(r.method === "GET" && r.path === "/metrics"))
    .map((r) => {
      let body: unknown = r.body;
      try {
        body = JSON.parse(r.body, (k, v) => (k === "rid" ? undefined : v));
      } catch {
        // not JSON: compared as text
      }
      return `${r.method} ${r.path} ${JSON.stringify(body)}`;
    });
}

/** The per-request facts of a details file that do not depend on timing. */
export function detailSignature(o: Observation, file = "d.jsonl"): string[] {
  return o
    .lines(file)
    .map((l) =>
      JSON.stringify([
        l.pct,
        l.round,
        l.index,
        l.ok,
        l.failure_kind,
        l.http_status,
        l.prompt_len,
        l.output_len,
        l.cached_tokens,
        l.cached_device_tokens,
        l.cached_host_tokens,
        l.token_events,
        l.finish_reason,
      ]),
    );
}
