/**
 * The console's account of a line's repeats (run --repeat N), after its last one: each main metric's mean over the
 * repeats with its 95 % t interval and coefficient of variation, then the line's gates as judged on the means.
 */
import { meanInterval } from "../metrics/intervals.ts";
import { labelOf } from "../schema/axes.ts";
import type { GateResult } from "../schema/nested.ts";
import { formatCell, renderTextTable } from "./text-table.ts";

/** The metrics every repeated line is summarized by (a gated metric is added to them). */
const REPEAT_METRICS = ["mean_ttft_ms", "p99_ttft_ms", "mean_itl_ms", "p99_itl_ms", "mean_e2e_latency_ms", "output_throughput", "request_throughput"] as const;

type Line = object & { gates?: readonly GateResult[] };

const numberIn = (line: object, key: string): number | null => {
  const v = (line as Record<string, unknown>)[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
};

/** "12.30..13.10"; "n/a" for one repeat. */
const interval = (lo: number, hi: number): string => (Number.isFinite(lo) && Number.isFinite(hi) ? `${formatCell(lo)}..${formatCell(hi)}` : "n/a");
const percent = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "n/a");

/** The table of one line's repeats; `planned` is --repeat (the most), `extra` the gated metrics. */
export function renderRepeats(repeats: readonly Line[], planned: number, extra: readonly string[] = []): string {
  const last = repeats.at(-1);
  if (last === undefined) return "";
  const metrics = [...new Set([...REPEAT_METRICS, ...extra])];
  const rows = metrics.flatMap((metric) => {
    const values = repeats.map((r) => numberIn(r, metric));
    if (values.some((v) => v === null)) return [];
    const m = meanInterval(values as number[]);
    return [[metric, formatCell(m.mean), interval(m.mean - m.half, m.mean + m.half), percent(m.cv)]];
  });
  const title = `Repeats of ${labelOf(last)}: ${repeats.length} of ${planned} (mean, 95 % CI, CV = sd/mean)`;
  const table = renderTextTable(["metric", "mean", "95% CI", "CV"], rows, ["left", "right", "right", "right"]);
  const gates = (last.gates ?? []).map(
    (g) =>
      `gate ${g.expr}: ${g.pass ? "pass" : "FAIL"} on the mean ${formatCell(g.value)} (95% CI ${interval(g.ci95_low ?? NaN, g.ci95_high ?? NaN)}, ${g.repeats ?? repeats.length} repeats)`,
  );
  return [`\n${title}`, table, ...gates, ""].join("\n");
}
