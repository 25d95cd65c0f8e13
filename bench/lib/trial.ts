/**
 * One trial: a fresh mock with a truth log, one client run against it (warmbench or the Python script), and the
 * figures that come out of joining the two. Every scenario is a list of trials.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { joinDetails, parseDetails, parseTruth, truthFigures, type JoinResult, type TruthFigures, type TruthLine } from "./join.ts";
import { readIfExists, runBounded, startMock, type ProcOutcome } from "./procs.ts";
import { mean, percentile } from "./stats.ts";

/** Paths and interpreters every trial needs. */
export interface BenchContext {
  root: string;
  bin: string;
  workDir: string;
  python: { exe: string; note: string; shimDir: string; script: string } | null;
  tokenizers: { qwen3: string; llama2: string };
  quick: boolean;
}

export type Tool = "warmbench" | "python";

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
  /** The mock's text: deltas (`--incremental`, the default here) or SGLang's default, the whole text so far. */
  textMode?: TextMode;
}

export type TextMode = "incremental" | "cumulative";

/** A spec's text mode, incremental unless it says otherwise. */
export const textModeOf = (spec: TrialSpec): TextMode => spec.textMode ?? "incremental";

/** Figures of one finished trial. */
export interface TrialResult {
  spec: TrialSpec;
  /** Target total event rate: streams * 1000 / itlMs. */
  targetRatePerS: number;
  client: Omit<ProcOutcome, "sampler"> & { hwmMiB: number };
  truth: Omit<TruthFigures, "serverTtftMs" | "serverItlMs" | "mockLatenessMs" | "steadyLatenessMs">;
  /** Truth lines that belong to this client's measured requests. */
  truthLines: number;
  mockMaxInFlight: number;
  /** Mock and client CPU over the measured window, % of one core. */
  mockCpuPct: number;
  clientCpuPct: number;
  /** Client CPU in the window per delivered event, µs. */
  clientCpuUsPerEvent: number;
  /** Server-side distribution figures, ms. */
  server: { ttftP50: number; ttftMean: number; itlP50: number; itlP99: number; latenessP99: number; steadyLatenessP99: number };
  /** warmbench only: the per-request join. */
  join: Omit<JoinResult, "ttftErrorMs" | "itlErrorMs" | "eventDelayMs" | "sendDelayMs" | "steadyDelayMs"> | null;
  errors: { ttftP50: number; ttftP99: number; itlP50: number; itlP99: number; delayP50: number; delayP99: number; sendP50: number; steadyDelayP99: number; steadyEvents: number } | null;
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
  const mockArgs = [
    "--itl-ms", String(spec.itlMs),
    "--ttft-base-ms", String(spec.ttftBaseMs ?? 20),
    "--prefill-us-per-token", "0",
    "--max-running", String(Math.max(spec.streams, 1) + 8),
    ...(textModeOf(spec) === "incremental" ? ["--incremental"] : []),
  ];
  const mock = await startMock(ctx.bin, truthPath, mockArgs);
  const outcome = spec.tool === "warmbench" ? await runWarmbench(ctx, spec, mock.url, dir) : await runPython(ctx, spec, mock.url, dir);
  let maxInFlight = NaN;
  try {
    maxInFlight = (await mock.stats()).maxInFlight;
  } catch {
    // a mock that died shows as NaN
  }
  await mock.stop();
  const allTruth = parseTruth(readIfExists(truthPath), truthPath);
  return summarize(spec, outcome.proc, outcome.details, outcome.pyResult, allTruth, mock.sampler.cpuMsBetween.bind(mock.sampler), maxInFlight);
}

interface ClientRun {
  proc: ProcOutcome;
  details: string | null;
  pyResult: Record<string, unknown> | null;
}

async function runWarmbench(ctx: BenchContext, spec: TrialSpec, url: string, dir: string): Promise<ClientRun> {
  const detailsPath = join(dir, "details.jsonl");
  const cmd = [
    ctx.bin, "run", "--model", spec.tokenizer, "--base-url", url,
    "--num-prompts", String(spec.streams), "--max-concurrency", String(spec.streams),
    "--total-tokens", String(spec.totalTokens), "--output-len", String(spec.outputLen),
    "--pcts", String(spec.pct), "--settle", String(spec.settleS ?? 0),
    "--request-details", detailsPath, "--output-file", join(dir, "results.jsonl"),
  ];
  // Set the fetch cap ourselves so warmbench does not re-exec: /proc and rusage then see the real client.
  const env = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(spec.streams + 64), NO_COLOR: "1" };
  const proc = await runBounded(cmd, { env, timeoutMs: spec.timeoutMs });
  return { proc, details: readIfExists(detailsPath), pyResult: lastJsonLine(join(dir, "results.jsonl")) };
}

async function runPython(ctx: BenchContext, spec: TrialSpec, url: string, dir: string): Promise<ClientRun> {
  if (!ctx.python) throw new Error("python trial without a python interpreter");
  const out = join(dir, "py.jsonl");
  const cmd = [
    ctx.python.exe, ctx.python.script, "--model", spec.tokenizer, "--base-url", url,
    "--num-prompts", String(spec.streams), "--max-concurrency", String(spec.streams),
    "--total-tokens", String(spec.totalTokens), "--output-len", String(spec.outputLen),
    "--pcts", String(spec.pct), "--output-file", out,
  ];
  const proc = await runBounded(cmd, { env: { PYTHONPATH: ctx.python.shimDir, PYTHONUNBUFFERED: "1" }, timeoutMs: spec.timeoutMs });
  return { proc, details: null, pyResult: lastJsonLine(out) };
}

/** The last per-pct line of a results JSONL (both tools write the script's keys); null when absent or torn. */
function lastJsonLine(path: string): Record<string, unknown> | null {
  const lines = readIfExists(path).trim().split("\n").filter((l) => l !== "");
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
): TrialResult {
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
 * True when the mock could not keep its own schedule in the steady window (every stream flowing): events late
 * by more than MOCK_LATE_P99_MS at p99, or under 90 % of the asked event rate. Without a steady window (too
 * short a trial) the whole span is judged instead.
 */
export function mockSaturated(r: TrialResult): boolean {
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
