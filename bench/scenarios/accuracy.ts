/**
 * Accuracy: how far warmbench's TTFT and ITL are from the truth at 1 to 4096 streams of 50 events/s each
 * (mock itl 20 ms). warmbench is joined per request on request_id; the Python script sends no id, so it is
 * judged on distributions only: its reported median TTFT / ITL p99 against the truth's server-side ones.
 * The ladder runs on incremental text (constant-size events); warmbench also runs a few rungs on SGLang's
 * default, cumulative text, whose events grow with the output.
 */
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import { runTrial, serverSaturated, textModeOf, type BenchContext, type TextMode, type Tool, type TrialResult } from "../lib/trial.ts";

const ITL_MS = 20;

/** Table columns shared with the capacity scenario. */
export const TRIAL_COLUMNS = [
  "tool",
  "server",
  "streams",
  "target ev/s",
  "achieved ev/s",
  "TTFT err p50/p99 ms",
  "ITL err p50/p99 ms",
  "event delay p50/p99 ms",
  "steady delay p99 ms (events)",
  "Δ median TTFT ms",
  "Δ ITL p99 ms",
  "server late p99 ms (steady)",
  "server CPU %",
  "client CPU %",
  "max in flight",
  "note",
];

/** One table row of a trial. */
export function trialRow(r: TrialResult): string[] {
  const e = r.errors;
  const rep = r.reported;
  const notes = [r.note];
  if (serverSaturated(r)) notes.push(`${r.serverKind} saturated`);
  if (r.emitter && !r.emitter.rt) notes.push("emitter not SCHED_FIFO");
  if (r.emitter?.partialWrites) notes.push(`${r.emitter.partialWrites} partial writes`);
  if (r.emitter?.burstMs) notes.push(`burst p99 ${fmt(r.emitter.burstMs.p99, 2)} ms`);
  if (r.join && (r.join.unmatched || r.join.mismatched)) notes.push(`${r.join.unmatched} unmatched, ${r.join.mismatched} mismatched`);
  if (rep && rep.completed < r.spec.streams) notes.push(`${rep.completed}/${r.spec.streams} completed`);
  return [
    r.spec.tool,
    r.serverKind + (r.spec.sync ? " sync" : ""),
    String(r.spec.streams),
    r.targetRatePerS.toFixed(0),
    r.truth.eventRatePerS.toFixed(0),
    e ? `${fmt(e.ttftP50, 3)} / ${fmt(e.ttftP99, 3)}` : "n/a",
    e ? `${fmt(e.itlP50, 3)} / ${fmt(e.itlP99, 3)}` : "n/a",
    e ? `${fmt(e.delayP50, 3)} / ${fmt(e.delayP99, 3)}` : "n/a",
    e ? `${fmt(e.steadyDelayP99, 3)} (${e.steadyEvents})` : "n/a",
    rep ? fmt(rep.ttftP50 - r.server.ttftP50, 3) : "-",
    rep ? fmt(rep.itlP99 - r.server.itlP99, 3) : "-",
    serverLateCell(r),
    fmt(r.mockCpuPct, 0),
    fmt(r.clientCpuPct, 0),
    String(r.mockMaxInFlight),
    notes.filter((n) => n !== "").join("; "),
  ];
}

/**
 * p99 lateness of the load server against its own schedule, all events (steady state in brackets). The mock's
 * comes from its truth log (against its first event); the emitter's is its own exact figure (against each
 * event's due time; with --sync, of the first write of each tick), in µs-precise ms.
 */
function serverLateCell(r: TrialResult): string {
  if (r.emitter) {
    const steady = r.emitter.tickLateness ?? r.emitter.steadyLateness;
    return `${fmt(r.emitter.lateness.p99, 3)} (${fmt(steady.p99, 3)})`;
  }
  if (r.serverKind === "emitter") return "no stats";
  return `${fmt(r.server.latenessP99, 2)} (${fmt(r.server.steadyLatenessP99, 2)})`;
}

/** The accuracy table: the trial columns with the mock's text mode after the tool. */
const ACCURACY_COLUMNS = [TRIAL_COLUMNS[0] as string, "text mode", ...TRIAL_COLUMNS.slice(1)];
const accuracyRow = (r: TrialResult): string[] => {
  const [tool, ...rest] = trialRow(r);
  return [tool as string, textModeOf(r.spec), ...rest];
};

/** Runs the accuracy ladder for warmbench and, when available, the Python script, then warmbench on cumulative text. */
export async function runAccuracy(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const streamsList = ctx.quick ? [1, 64] : [1, 64, 512, 1024, 4096];
  const cumulativeStreams = ctx.quick ? [64] : [64, 1024];
  const tools: Tool[] = ctx.python ? ["warmbench", "python"] : ["warmbench"];
  const plan: Array<{ tool: Tool; streams: number; textMode: TextMode }> = [
    ...streamsList.flatMap((streams) => tools.map((tool) => ({ tool, streams, textMode: "incremental" as const }))),
    ...cumulativeStreams.map((streams) => ({ tool: "warmbench" as const, streams, textMode: "cumulative" as const })),
  ];
  const trials: TrialResult[] = [];
  for (const { tool, streams, textMode } of plan) {
    const outputLen = ctx.quick ? 25 : streams >= 4096 ? 50 : 100;
    progress(`accuracy: ${tool} ${streams} streams x ${1000 / ITL_MS} ev/s, ${outputLen} events each, ${textMode} text`);
    const timeoutMs = (tool === "python" ? 90 : 120) * 1000;
    const r = await runTrial(ctx, { tool, streams, itlMs: ITL_MS, outputLen, totalTokens: 64, pct: 0, tokenizer: ctx.tokenizers.llama2, timeoutMs, textMode });
    trials.push(r);
    progress(`  -> ${accuracyRow(r).join(" | ")}`);
  }
  const at = (tool: Tool, streams: number) => trials.find((t) => t.spec.tool === tool && t.spec.streams === streams && textModeOf(t.spec) === "incremental");
  const checkStreams = ctx.quick ? 64 : 1024;
  const ref = at("warmbench", checkStreams);
  const targets = [
    {
      target: `timestamp error p99 <= 0.5 ms at 1024 x 50 ev/s${ctx.quick ? " (quick: measured at 64)" : ""}`,
      measured: ref?.errors
        ? `${fmt(ref.errors.delayP99, 3)} ms (TTFT err p99 ${fmt(ref.errors.ttftP99, 3)}, ITL err p99 ${fmt(ref.errors.itlP99, 3)})${serverSaturated(ref) ? ", mock saturated" : ""}`
        : "no data",
      pass: ctx.quick || !ref?.errors ? null : ref.errors.delayP99 <= 0.5,
    },
  ];
  return {
    name: "accuracy",
    title: `Accuracy: measured minus true TTFT / ITL, streams x 50 ev/s (mock itl ${ITL_MS} ms)`,
    columns: ACCURACY_COLUMNS,
    rows: trials.map(accuracyRow),
    targets,
    notes: [
      "Steady delay = event delay of the events written while every stream was past its first event and none had sent its last (no connection storm, no end-of-stream work); the count of such events is in brackets.",
      "TTFT err = client TTFT - (mock's first-event epoch - client send epoch); ITL err = client gap - mock gap; event delay = client receive epoch - mock write epoch, every token event (joined on request_id = x-request-id).",
      "Python: no per-request join is possible (it sends no request id and has no details output), so only Δ median TTFT (its median TTFT - the mock's median server-side TTFT) and Δ ITL p99 (its p99 ITL - the mock's p99 ITL) are given, read from its --output-file JSONL (the same numbers as its console). Python's TTFT includes a new TCP connection per request (one aiohttp session per request).",
      "Δ columns for warmbench are the same distribution-level figures, for a like-for-like comparison.",
      "text mode: incremental = the mock with --incremental (SGLang's --incremental-streaming-output: constant-size events); cumulative = SGLang's default, every event carries the whole text and output ids so far (warmbench reads the mode from /server_info and keeps only the last event's text). The targets are judged on incremental text.",
    ],
    trials,
    figures: { timestampErrorP99At1024Ms: ref?.errors?.delayP99 ?? null },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
