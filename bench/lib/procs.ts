/**
 * Child processes of the harness: the mock server, warmbench and the Python script, each with a /proc sampler
 * (CPU and peak RSS over time) and a hard time limit so that no scenario can run away.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Subprocess } from "bun";

/** Epoch ms on the clock every process on this host shares with the mock's truth log. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

const CLOCK_TICKS_PER_S = 100; // USER_HZ on Linux

/** One reading of /proc/<pid>: CPU so far and memory. */
interface ProcSample {
  epochMs: number;
  /** user + system CPU time so far, ms (10 ms resolution). */
  cpuMs: number;
  rssKb: number;
  hwmKb: number;
}

/** Reads /proc/<pid>/stat and /status once; null when the process is gone. */
function readProc(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (comm) may contain spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    return { epochMs: epochMs(), cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_S, rssKb: kb("VmRSS"), hwmKb: kb("VmHWM") };
  } catch {
    return null;
  }
}

/** The children of a process (Linux: /proc/PID/task/PID/children); [] when it has none or is gone. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .split(" ")
      .filter((s) => s.trim() !== "")
      .map(Number);
  } catch {
    return [];
  }
}

/** A process and all its descendants (warmbench's worker processes) read as one: CPU and memory added up. */
function readProcTree(pid: number): ProcSample | null {
  const root = readProc(pid);
  if (root === null) return null;
  for (const child of childrenOf(pid)) {
    const c = readProcTree(child);
    if (c === null) continue;
    root.cpuMs += c.cpuMs;
    root.rssKb += c.rssKb;
    root.hwmKb += c.hwmKb;
  }
  return root;
}

/** Polls a process (with its descendants) every `everyMs` until stopped; the samples give CPU over any time window. */
class ProcSampler {
  readonly samples: ProcSample[] = [];
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    readonly pid: number,
    everyMs = 100,
  ) {
    this.take();
    this.timer = setInterval(() => this.take(), everyMs);
  }

  take(): void {
    const s = readProcTree(this.pid);
    if (s !== null) this.samples.push(s);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** CPU ms spent between two epoch times (from the samples just outside the window). */
  cpuMsBetween(fromMs: number, toMs: number): number {
    let before: ProcSample | undefined;
    let after: ProcSample | undefined;
    for (const s of this.samples) {
      if (s.epochMs <= fromMs) before = s;
      if (s.epochMs >= toMs && after === undefined) after = s;
    }
    before ??= this.samples[0];
    after ??= this.samples[this.samples.length - 1];
    return before && after ? after.cpuMs - before.cpuMs : NaN;
  }

  /** Peak VmHWM seen, KiB. */
  get hwmKb(): number {
    return this.samples.reduce((m, s) => Math.max(m, s.hwmKb), 0);
  }
}

/** How a bounded child process ended. */
export interface ProcOutcome {
  code: number | null;
  timedOut: boolean;
  spawnEpochMs: number;
  wallMs: number;
  /** user + system CPU of the process from wait4's rusage, ms. */
  cpuMs: number;
  /** Peak RSS from rusage, MiB. */
  maxRssMiB: number;
  sampler: ProcSampler;
  stdoutTail: string;
  stderrTail: string;
}

/** Keeps the last `max` characters of a stream (draining it so the child never blocks on a full pipe). */
async function drainTail(stream: ReadableStream<Uint8Array> | undefined, max = 4000): Promise<string> {
  if (!stream) return "";
  const decoder = new TextDecoder();
  let tail = "";
  for await (const chunk of stream) {
    tail += decoder.decode(chunk, { stream: true });
    if (tail.length > 2 * max) tail = tail.slice(-max);
  }
  return tail.slice(-max);
}

/** Runs a command to completion, killing it after `timeoutMs`. */
export async function runBounded(cmd: string[], opts: { env?: Record<string, string>; timeoutMs: number; cwd?: string }): Promise<ProcOutcome> {
  const spawnEpochMs = epochMs();
  const proc = Bun.spawn(cmd, { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const sampler = new ProcSampler(proc.pid);
  let timedOut = false;
  const killer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, opts.timeoutMs);
  const [stdoutTail, stderrTail] = await Promise.all([drainTail(proc.stdout), drainTail(proc.stderr), proc.exited]);
  clearTimeout(killer);
  sampler.stop();
  const wallMs = epochMs() - spawnEpochMs;
  const usage = proc.resourceUsage();
  return {
    code: proc.exitCode,
    timedOut,
    spawnEpochMs,
    wallMs,
    cpuMs: usage ? Number(usage.cpuTime.total) / 1000 : NaN,
    maxRssMiB: usage ? usage.maxRSS / 2 ** 20 : NaN,
    sampler,
    stdoutTail,
    stderrTail,
  };
}

/** A server process the harness started (the mock or the emitter), with its /proc sampler. */
export interface ServerProcess {
  url: string;
  pid: number;
  sampler: ProcSampler;
  /** SIGTERM, wait for exit (SIGKILL after 5 s); the truth log is complete afterwards. */
  stop(): Promise<void>;
}

/** A running `warmbench mock`. */
export interface MockProcess extends ServerProcess {
  /** GET /mock/stats (maxInFlight etc.). */
  stats(): Promise<{ maxInFlight: number; maxRunning: number; generateRequests: number }>;
}

/**
 * Spawns a server that prints "... listening on http://HOST:PORT" on stderr and waits for that line (15 s at
 * most); its stderr is drained afterwards, and its last 4000 characters are kept for `stderrTail()`.
 */
export async function startServer(cmd: string[]): Promise<ServerProcess & { stderrTail(): string }> {
  const proc: Subprocess<"ignore", "ignore", "pipe"> = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  let url: string | null = null;
  while (url === null) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
    url = /listening on (http:\/\/\S+)/.exec(seen)?.[1] ?? null;
  }
  clearTimeout(deadline);
  if (url === null) throw new Error(`${cmd[0]} did not start: ${seen.slice(-500)}`);
  // Keep draining stderr so a chatty server never blocks on a full pipe.
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      seen = (seen + decoder.decode(value, { stream: true })).slice(-4000);
    }
  })();
  const sampler = new ProcSampler(proc.pid);
  return {
    url,
    pid: proc.pid,
    sampler,
    stderrTail: () => seen,
    stop: async () => {
      sampler.take();
      sampler.stop();
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      await drained;
      clearTimeout(killer);
    },
  };
}

/** Starts `<bin> mock --port 0 --truth <truthPath> ...extra` and waits for its "listening on" line. */
export async function startMock(bin: string, truthPath: string, extra: string[]): Promise<MockProcess> {
  const server = await startServer([bin, "mock", "--host", "127.0.0.1", "--port", "0", "--truth", truthPath, ...extra]);
  return {
    ...server,
    stats: async () => (await (await fetch(`${server.url}/mock/stats`)).json()) as { maxInFlight: number; maxRunning: number; generateRequests: number },
  };
}

/** Reads a file that may not exist (a crashed run), as "". */
export function readIfExists(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}
