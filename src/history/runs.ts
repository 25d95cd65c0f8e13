/**
 * One run as the history keeps it: its lines (sweep or round lines alike, read by key and axes), and what the
 * indexed columns say of it: when it started, its workload fingerprint, whether its gates all passed.
 */
import { compareMetric } from "../compare/metrics.ts";
import { field, type CompareLine } from "../compare/lines.ts";
import { ROUND_SHAPE } from "../compare/pairing.ts";
import { axesOf, isRoundAxes, labelOf } from "../schema/axes.ts";
import type { GateResult } from "../schema/nested.ts";
import { judgeEvidence } from "../metrics/evidence-check.ts";

/** The key metrics kept as columns of `lines`, read as compare reads them (percentiles from the HDR histograms). */
export const KEY_METRICS = [
  "mean_ttft_ms",
  "p99_ttft_ms",
  "mean_itl_ms",
  "p99_itl_ms",
  "p99_e2e_latency_ms",
  "output_throughput",
  "request_throughput",
] as const;

export interface HistoryRun {
  runId: string;
  startedAt: string;
  fingerprint: string;
  kind: "pct" | "round";
  lines: CompareLine[];
  gateCount: number;
  gatesFailed: number;
  interrupted: boolean;
  /** Every gate verdict of every line passed (a run without gates has none that failed) and it ran to its end. */
  green: boolean;
  /** Why the run can never be a baseline (interrupted, a gate failed, a line the evidence check fails); null: it may. */
  rejectedBecause: string | null;
}

/** JSON with sorted keys, so two equal objects written in another key order hash alike. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * The run's workload fingerprint: a hash of each line's (`workload`, or a round line's conversation shape) by its
 * label, repeats counted once. Two runs share it when every line measured the same work (what compare pairs).
 */
export function runFingerprint(lines: readonly CompareLine[]): string {
  const byLabel = new Map<string, unknown>();
  for (const l of lines) {
    const shape =
      isRoundAxes(axesOf(l)) && field(l, "workload") === undefined
        ? Object.fromEntries(ROUND_SHAPE.map((k) => [k, field(l, k) ?? null]))
        : (field(l, "workload") ?? null);
    byLabel.set(labelOf(l), shape);
  }
  const text = canonical([...byLabel.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 16);
}

const gatesOf = (l: CompareLine): GateResult[] => {
  const g = field(l, "gates");
  return Array.isArray(g) ? (g as GateResult[]) : [];
};

/** A run of a results file as the history stores it; `fallbackId` names runs without a run_id (the script's files). */
export function historyRun(runId: string | null, lines: CompareLine[], fallbackId: string): HistoryRun {
  const first = lines[0] as CompareLine;
  const header = field(first, "run") as { started_at?: unknown } | undefined;
  const started = header?.started_at ?? field(first, "started_at");
  const gates = lines.flatMap(gatesOf);
  const gatesFailed = gates.filter((g) => g.pass !== true).length;
  const interrupted = lines.some((l) => field(l, "interrupted") === true);
  return {
    runId: runId ?? fallbackId,
    startedAt: typeof started === "string" ? started : new Date(0).toISOString(),
    fingerprint: runFingerprint(lines),
    kind: isRoundAxes(axesOf(first)) ? "round" : "pct",
    lines,
    gateCount: gates.length,
    gatesFailed,
    interrupted,
    green: gatesFailed === 0 && !interrupted,
    rejectedBecause: rejection(lines, gatesFailed),
  };
}

/** Why a run's own evidence rules it out as a baseline (the evidence check's history_baseline row), or null. */
function rejection(lines: readonly CompareLine[], gatesFailed: number): string | null {
  for (const l of lines) {
    const [p] = judgeEvidence("history_baseline", l);
    if (p !== undefined) return `${labelOf(l)}: ${p.text}`;
  }
  const partial = missingLines(lines);
  if (partial !== null) return partial;
  return gatesFailed > 0 ? `${gatesFailed} gate verdict(s) failed` : null;
}

const count = (v: unknown): number | null => (Array.isArray(v) ? v.length : null);

/**
 * A sweep run that stopped between lines (a SIGINT, a killed job) leaves whole lines that each look complete: what
 * tells it is the run's own plan in its first line (pcts x working sets x rates x repeats). Null: every planned line
 * is there, or the run states no plan to hold it to (a round run, a merge, a replay's windows, the script's files).
 */
function missingLines(lines: readonly CompareLine[]): string | null {
  const options = (field(lines[0]!, "run") as { options?: Record<string, unknown> } | undefined)?.options;
  if (options === undefined || lines.some((l) => isRoundAxes(axesOf(l)) || field(l, "window") !== undefined || field(l, "probe") !== undefined)) return null;
  const [pcts, sets, rates] = [count(options.pcts), count(options.working_sets), count(options.request_rates)];
  if (pcts === null || sets === null || rates === null) return null;
  // --repeat-until-cv stops a cell's repeats early on purpose: then only each cell's first line is planned for sure.
  const untilCv = typeof options.repeat_until_cv === "number";
  const repeats = typeof options.repeat === "number" && options.repeat > 1 && !untilCv ? options.repeat : 1;
  const cells = pcts * sets * rates;
  const planned = cells * repeats;
  const seen = new Set(lines.map(labelOf)).size;
  if (lines.length >= planned && seen >= cells) return null;
  const have = repeats > 1 ? lines.length : seen;
  return `partial: ${have} of the ${planned} planned lines (${pcts} pct x ${sets} working set x ${rates} rate${repeats > 1 ? ` x ${repeats} repeats` : ""}) are in the file: the run stopped early`;
}

/** The value of a key metric (or any numeric key) of a line, as compare reads it; null when absent. */
export function metricValue(line: CompareLine, name: string): number | null {
  const m = compareMetric(name);
  if (m !== undefined) return m.read(line).value;
  const v = field(line, name);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}
