/**
 * One trial: a fresh load server with a truth log (the Bun mock, or the C emitter for capacity), one client run
 * against it (warmbench or the Python script), and the figures that come out of joining the two. Every scenario
 * is a list of trials.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { startEmitter, type EmitterStats } from "./emitter.ts";
import { joinDetails, parseDetails, parseTruth, truthFigures, type JoinResult, type TruthFigures, type TruthLine } from "./join.ts";
import { readIfExists, runBounded, startMock, type ProcOutcome, type ServerProcess } from "./procs.ts";
import { mean, percentile } from "./stats.ts";

/** Paths and interpreters every trial needs. */
export interface BenchContext {
  root: string;
  bin: string;
  workDir: string;
  python: { exe: string; note: string; shimDir: string; script: string } | null;
  tokenizers: { qwen3: string; llama2: string };
  quick: boolean;
  /** The compiled emitter (lib/emitter.ts), or null when no scenario of this run needs it. */
  emitter: string | null;
  /** --baseline: a warmbench binary to compare with (timeline-cost's "before"); null when none was given. */
  baseline: string | null;
}

export type Tool = "warmbench" | "python";
/** The load server of a trial: the Bun mock (functional, SGLang-faithful) or the C emitter (precise clock). */
type ServerKind = "mock" | "emitter";

/** What a trial asks of the mock and of the client. */
export interface TrialSpec {
  tool: Tool;
  streams: number;
  /** Mock decode gap, ms (per-stream event rate = 1000 / itlMs). */
  itlMs: number;
  outputLen: number;
  totalTokens: number;
  pct: number;
  tokenizer: string;
  timeoutMs: number;
  ttftBaseMs?: number;
  settleS?: number;
  /** Default "mock". */
  server?: ServerKind;
  /** Emitter only: synchronized bursts (every stream's k-th event due at the same decode step). */
  sync?: boolean;
  /** warmbench --workers (a count or "auto"); one process when absent. */
  workers?: number | "auto";
  /** The mock's text: deltas (`--incremental`, the default here) or SGLang's default, the whole text so far. */
  textMode?: TextMode;
  /** More warmbench flags (a scenario comparing one flag's cost). */
  extraArgs?: readonly string[];
}

export type TextMode = "incremental" | "cumulative";

/** A spec's text mode, incremental unless it says otherwise. */
export const textModeOf = (spec: TrialSpec): TextMode => spec.textMode ?? "incremental";

/** Figures of one finished trial. */
export interface TrialResult {
  spec: TrialSpec;
  serverKind: ServerKind;
  /** Target total event rate: streams * 1000 / itlMs. */
  targetRatePerS: number;
  client: Omit<ProcOutcome, "sampler"> & { hwmMiB: number };
  truth: Omit<TruthFigures, "serverTtftMs" | "serverItlMs" | "mockLatenessMs" | "steadyLatenessMs">;
  /** Truth lines that belong to this client's measured requests. */
  truthLines: number;
  mockMaxInFlight: number;
  /** The emitter's own figures (its lateness against its schedule); null for mock trials or a dead emitter. */
  emitter: EmitterStats | null;
  /** Server and client CPU over the measured window, % of one core. */
  mockCpuPct: number;
  clientCpuPct: number;
  /** Client CPU in the window per delivered event, µs. */
  clientCpuUsPerEvent: number;
  /** Server-side distribution figures, ms. */
  server: { ttftP50: number; ttftMean: number; itlP50: number; itlP99: number; latenessP99: number; steadyLatenessP99: number };
  /** warmbench only: the per-request join. */
  join: Omit<JoinResult, "ttftErrorMs" | "itlErrorMs" | "eventDelayMs" | "eventWrittenMs" | "sendDelayMs" | "steadyDelayMs"> | null;
  /** Synchronized bursts (emitter --sync): the delay of the last event of each burst, p50/p99 over the steady bursts, ms. */
  bursts: { count: number; lastDelayP50: number; lastDelayP99: number } | null;
  errors: {
    ttftP50: number;
    ttftP99: number;
    itlP50: number;
    itlP99: number;
    delayP50: number;
    delayP99: number;
    sendP50: number;
    steadyDelayP99: number;
    steadyEvents: number;
  } | null;
  /** The client's own reported distribution figures (warmbench: from details; Python: its JSONL), ms. */
  reported: { ttftP50: number; ttftMean: number; itlP50: number; itlP99: number; completed: number } | null;
  /** Epoch ms of the first /generate of this client's measured requests the mock received. */
  firstReceivedMs: number;
  /** Epoch ms of the very first /generate the mock received (warmup included). */
  firstAnyReceivedMs: number;
  note: string;
}

let trialCounter = 0;

/** Runs one trial end to end; never throws for a client failure (it is recorded in `note`). */
export async function runTrial(ctx: BenchContext, spec: TrialSpec): Promise<TrialResult> {
  const dir = mkdtempSync(join(ctx.workDir, `t${++trialCounter}-`));
  const truthPath = join(dir, "truth.jsonl");
  const server = await startLoadServer(ctx, spec, truthPath);
  const outcome = spec.tool === "warmbench" ? await runWarmbench(ctx, spec, server.proc.url, dir) : await runPython(ctx, spec, server.proc.url, dir);
  const { maxInFlight, emitter } = await server.finalStats();
  await server.proc.stop();
  const allTruth = parseTruth(readIfExists(truthPath), truthPath);
  const sampler = server.proc.sampler;
  const r = summarize(spec, outcome.proc, outcome.details, outcome.pyResult, allTruth, sampler.cpuMsBetween.bind(sampler), maxInFlight);
  return { ...r, emitter };
}

interface LoadServer {
  proc: ServerProcess;
  /** Its figures once the client is done; NaN / null when it died. */
  finalStats(): Promise<{ maxInFlight: number; emitter: EmitterStats | null }>;
}

/** The trial's load server: the emitter, or the mock with a constant TTFT and incremental, constant-size events. */
async function startLoadServer(ctx: BenchContext, spec: TrialSpec, truthPath: string): Promise<LoadServer> {
  const ttftMs = spec.ttftBaseMs ?? 20;
  if ((spec.server ?? "mock") === "emitter") {
    if (ctx.emitter === null) throw new Error("emitter trial without a built emitter");
    const e = await startEmitter(ctx.emitter, truthPath, { ttftMs, itlMs: spec.itlMs, sync: spec.sync ?? false });
    return {
      proc: e,
      finalStats: async () => {
        try {
          const emitter = await e.stats();
          return { maxInFlight: emitter.maxInFlight, emitter };
        } catch {
          return { maxInFlight: NaN, emitter: null };
        }
      },
    };
  }
  const m = await startMock(ctx.bin, truthPath, [
    "--itl-ms",
    String(spec.itlMs),
    "--ttft-base-ms",
    String(ttftMs),
    "--prefill-us-per-token",
    "0",
    "--max-running",
    String(Math.max(spec.streams, 1) + 8),
    ...(textModeOf(spec) === "incremental" ? ["--incremental"] : []),
  ]);
  return {
    proc: m,
    finalStats: async () => {
      try {
        return { maxInFlight: (await m.stats()).maxInFlight, emitter: null };
      } catch {
        return { maxInFlight: NaN, emitter: null };
      }
    },
  };
}

interface ClientRun {
  proc: ProcOutcome;
  details: string | null;
  pyResult: Record<string, unknown> | null;
}

async function runWarmbench(ctx: BenchContext, spec: TrialSpec, url: string, dir: string): Promise<ClientRun> {
  const detailsPath = join(dir, "details.jsonl");
  const cmd = [
    ctx.bin,
    "run",
    "--model",
    spec.tokenizer,
    "--base-url",
    url,
    "--num-prompts",
    String(spec.streams),
    "--max-concurrency",
    String(spec.streams),
    "--total-tokens",
    String(spec.totalTokens),
    "--output-len",
    String(spec.outputLen),
    "--pcts",
    String(spec.pct),
    "--settle",
    String(spec.settleS ?? 0),
    "--request-details",
    detailsPath,
    "--output-file",
    join(dir, "results.jsonl"),
  ];
  // The emitter has no cache to flush or verify: no flush, no canary requests, only the measured streams.
  if ((spec.server ?? "mock") === "emitter") cmd.push("--flush", "none", "--verify-cache", "off");
  if (spec.workers !== undefined) cmd.push("--workers", String(spec.workers));
  if (spec.extraArgs !== undefined) cmd.push(...spec.extraArgs);
  // Set the fetch cap ourselves so warmbench does not re-exec: /proc and rusage then see the real client.
  const env = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(spec.streams + 64), NO_COLOR: "1" };
  const proc = await runBounded(cmd, { env, timeoutMs: spec.timeoutMs });
  return { proc, details: readIfExists(detailsPath), pyResult: lastJsonLine(join(dir, "results.jsonl")) };
}

async function runPython(ctx: BenchContext, spec: TrialSpec, url: string, dir: string): Promise<ClientRun> {
  if (!ctx.python) throw new Error("python trial without a python interpreter");
  const out = join(dir, "py.jsonl");
  const cmd = [
    ctx.python.exe,
    ctx.python.script,
    "--model",
    spec.tokenizer,
    "--base-url",
    url,
    "--num-prompts",
    String(spec.streams),
    "--max-concurrency",
    String(spec.streams),
    "--total-tokens",
    String(spec.totalTokens),
    "--output-len",
    String(spec.outputLen),
    "--pcts",
    String(spec.pct),
    "--output-file",
    out,
  ];
  const proc = await runBounded(cmd, { env: { PYTHONPATH: ctx.python.shimDir, PYTHONUNBUFFERED: "1" }, timeoutMs: spec.timeoutMs });
  return { proc, details: null, pyResult: lastJsonLine(out) };
}

/** The last per-pct line of a results JSONL (both tools write the script's keys); null when absent or torn. */
function lastJsonLine(path: string): Record<string, unknown> | null {
  const lines = readIfExists(path)
    .trim()
    .split("\n")
    .filter((l) => l !== "");
  // warmbench adds "run" and "summary" lines around the script's per-pct lines: take the last with its metrics.
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      // Python's json.dumps writes Infinity for request_rate, which JSON.parse rejects.
      const o = JSON.parse(lines[i]!.replace(/\bInfinity\b/g, "null")) as Record<string, unknown>;
      if ("median_ttft_ms" in o) return o;
    } catch {
      // a torn line: look further up
    }
  }
  return null;
}

function summarize(
  spec: TrialSpec,
  proc: ProcOutcome,
  detailsText: string | null,
  py: Record<string, unknown> | null,
  allTruth: TruthLine[],
  mockCpuMsBetween: (fromMs: number, toMs: number) => number,
  maxInFlight: number,
): Omit<TrialResult, "emitter"> {
  const details = detailsText !== null && detailsText !== "" ? parseDetails(detailsText) : [];
  const ids = new Set(details.map((d) => d.requestId));
  // Joined on request ids when the client wrote them; otherwise (the Python script) every line but the warmup's.
  const truth =
    details.length > 0
      ? allTruth.filter((t) => t.requestId !== null && ids.has(t.requestId))
      : allTruth.filter((t) => t.completionTokens > 1 || spec.outputLen <= 1);
  const tf = truthFigures(truth, spec.itlMs);
  const windowMs = tf.lastEventMs - tf.firstReceivedMs;
  const clientCpuMs = proc.sampler.cpuMsBetween(tf.firstReceivedMs, tf.lastEventMs);
  const mockCpuMs = mockCpuMsBetween(tf.firstReceivedMs, tf.lastEventMs);
  const j = details.length > 0 ? joinDetails(details, truth) : null;
  // Both tools write the script's JSONL keys, so the distribution figures come from the same place.
  const reported = py
    ? {
        ttftP50: Number(py.median_ttft_ms),
        ttftMean: Number(py.mean_ttft_ms),
        itlP50: Number(py.median_itl_ms),
        itlP99: Number(py.p99_itl_ms),
        completed: Number(py.completed),
      }
    : null;
  const { sampler, ...client } = proc;
  const { serverTtftMs, serverItlMs, mockLatenessMs, steadyLatenessMs, ...truthRest } = tf;
  const notes: string[] = [];
  if (proc.timedOut) notes.push(`client killed after ${(spec.timeoutMs / 1000).toFixed(0)} s`);
  else if (proc.code !== 0) notes.push(`client exit ${proc.code}: ${lastLine(proc.stderrTail)}`);
  if (spec.tool === "warmbench" && details.length === 0) notes.push("no request details: distributions only");
  return {
    spec,
    serverKind: spec.server ?? "mock",
    targetRatePerS: (spec.streams * 1000) / spec.itlMs,
    client: { ...client, hwmMiB: sampler.hwmKb / 1024 },
    truth: truthRest,
    truthLines: truth.length,
    mockMaxInFlight: maxInFlight,
    mockCpuPct: (mockCpuMs / windowMs) * 100,
    clientCpuPct: (clientCpuMs / windowMs) * 100,
    clientCpuUsPerEvent: tf.events > 0 ? (clientCpuMs * 1000) / tf.events : NaN,
    server: {
      ttftP50: percentile(serverTtftMs, 50),
      ttftMean: mean(serverTtftMs),
      itlP50: percentile(serverItlMs, 50),
      itlP99: percentile(serverItlMs, 99),
      latenessP99: percentile(mockLatenessMs, 99),
      steadyLatenessP99: percentile(steadyLatenessMs, 99),
    },
    join: j ? { details: j.details, ok: j.ok, joined: j.joined, unmatched: j.unmatched, mismatched: j.mismatched } : null,
    bursts: spec.sync && j ? burstFigures(j, spec.itlMs) : null,
    errors: j
      ? {
          ttftP50: percentile(j.ttftErrorMs, 50),
          ttftP99: percentile(j.ttftErrorMs, 99),
          itlP50: percentile(j.itlErrorMs, 50),
          itlP99: percentile(j.itlErrorMs, 99),
          delayP50: percentile(j.eventDelayMs, 50),
          delayP99: percentile(j.eventDelayMs, 99),
          sendP50: percentile(j.sendDelayMs, 50),
          steadyDelayP99: percentile(j.steadyDelayMs, 99),
          steadyEvents: j.steadyDelayMs.length,
        }
      : null,
    reported,
    firstReceivedMs: tf.firstReceivedMs,
    firstAnyReceivedMs: allTruth.reduce((m, t) => Math.min(m, t.receivedMs), Infinity),
    note: notes.join("; "),
  };
}

const lastLine = (text: string): string => text.trim().split("\n").pop()?.slice(0, 200) ?? "";

/** Mock events later than this (p99) against its absolute schedule mean it fell behind, ms. */
const MOCK_LATE_P99_MS = 20;
/**
 * The emitter keeps its schedule to ~0.1 ms (p99) when the box lets it; later than this it could not: the box
 * (or the emitter's own write work) is the limit, ms.
 */
const EMITTER_LATE_P99_MS = 1;

/**
 * True when the load server could not keep its own schedule in the steady window (every stream flowing).
 * The emitter: its own lateness p99 over EMITTER_LATE_P99_MS (with --sync, that of the first write of each
 * tick: the rest of a burst waits for the writes before it by design). Every event it wrote on time is the
 * asked rate, so its lateness is the whole test. The mock: events later than MOCK_LATE_P99_MS at p99 against
 * its schedule, or under 90 % of the asked event rate. Without a steady window (too short a trial) the whole
 * span is judged instead.
 */
export function serverSaturated(r: TrialResult): boolean {
  if (r.serverKind === "emitter") {
    if (r.emitter === null) return true; // it died before it could report
    const late = r.emitter.tickLateness ?? (r.emitter.steadyLateness.count > 0 ? r.emitter.steadyLateness : r.emitter.lateness);
    return !(late.p99 <= EMITTER_LATE_P99_MS);
  }
  if (Number.isFinite(r.truth.steadyEventRatePerS)) {
    return r.server.steadyLatenessP99 > MOCK_LATE_P99_MS || r.truth.steadyEventRatePerS < 0.9 * r.targetRatePerS;
  }
  return r.server.latenessP99 > MOCK_LATE_P99_MS || r.truth.eventRatePerS < 0.9 * r.targetRatePerS * steadyShare(r);
}

/**
 * Share of the trial's span in which events can flow at the full rate: the span also holds the ramp (connects,
 * TTFT) and the tail, during which fewer streams are active.
 */
function steadyShare(r: TrialResult): number {
  const decodeMs = (r.spec.outputLen - 1) * r.spec.itlMs;
  const spanMs = r.truth.lastEventMs - r.truth.firstReceivedMs;
  return spanMs > 0 ? Math.min(1, decodeMs / spanMs) : 1;
}

/**
 * In a synchronized run every stream's k-th event is written in one burst per decode step: group the events by
 * burst (the writes of one step lie within a fraction of the step), and take, per burst, the delay of the event the
 * client stamped last - the one that waited behind all the others. Steady bursts only (every stream flowing).
 */
function burstFigures(j: JoinResult, stepMs: number): { count: number; lastDelayP50: number; lastDelayP99: number } {
  const steadyFrom = Math.min(...j.eventWrittenMs);
  const worst = new Map<number, { delay: number; n: number }>();
  for (let i = 0; i < j.eventDelayMs.length; i++) {
    const burst = Math.round((j.eventWrittenMs[i]! - steadyFrom) / stepMs);
    const w = worst.get(burst) ?? { delay: -Infinity, n: 0 };
    w.delay = Math.max(w.delay, j.eventDelayMs[i]!);
    w.n++;
    worst.set(burst, w);
  }
  const full = Math.max(...[...worst.values()].map((w) => w.n));
  // Only bursts where (nearly) every stream took part: not the ramp-up or the tail.
  const lasts = [...worst.values()].filter((w) => w.n >= full * 0.95).map((w) => w.delay);
  return { count: lasts.length, lastDelayP50: percentile(lasts, 50), lastDelayP99: percentile(lasts, 99) };
}
