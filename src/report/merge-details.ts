/**
 * A merge's exact percentiles: with every input run's --request-details file at hand, the union's TTFT, TPOT, ITL and
 * E2E statistics are computed from the requests themselves, by the same numpy-exact code as a line of one run
 * (metrics/script-metrics.ts), instead of from the merged HDR histograms. One key, one definition.
 */
import { latencyStats, type LatencyStats } from "../metrics/script-metrics.ts";

/** What merge reads of one details line. */
export interface DetailSample {
  requestId: string;
  ok: boolean;
  ttftMs: number;
  latencyMs: number;
  outputLen: number;
  itlMs: number[];
  /** A multi-turn turn's round; null for a sweep request. */
  round: number | null;
  /** When it was sent, ms since the epoch; null in details written before it was recorded. */
  startEpochMs: number | null;
}

/** The details lines of a file (its text); a line that is not one is skipped (the file is an aid, not the result). */
export function parseDetails(text: string): DetailSample[] {
  const out: DetailSample[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    let d: Record<string, unknown>;
    try {
      d = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof d.request_id !== "string" || typeof d.ok !== "boolean" || !Array.isArray(d.itl_ms)) continue;
    out.push({
      requestId: d.request_id,
      ok: d.ok,
      ttftMs: Number(d.ttft_ms),
      latencyMs: Number(d.latency_ms),
      outputLen: Number(d.output_len),
      itlMs: d.itl_ms as number[],
      round: typeof d.round === "number" ? d.round : null,
      startEpochMs: typeof d.start_epoch_ms === "number" && Number.isFinite(d.start_epoch_ms) ? d.start_epoch_ms : null,
    });
  }
  return out;
}

/** The axes a sweep request's id names: `RUN-TAG-INDEX`, TAG = pct[wK][@RATE][rN] (sweep/plan.ts). */
const TAG = /^(\d+(?:\.\d+)?)(?:w(\d+))?(?:@([\d.]+|Infinity|inf))?(?:r(\d+))?$/;

interface LineAxes {
  run_id?: string | null;
  shared_prefix_pct?: number;
  working_set?: number;
  request_rate?: number;
  repeat?: number;
  round?: number;
  type?: string;
}

/** The requests of `line` among a run's details: by round for a round line, by the id's tag for a sweep line. */
function samplesOfLine(line: LineAxes, samples: readonly DetailSample[]): DetailSample[] {
  const runId = line.run_id;
  if (typeof runId !== "string") return [];
  const mine = samples.filter((s) => s.requestId.startsWith(`${runId}-`));
  if (line.type === "round") return mine.filter((s) => s.round === line.round);
  return mine.filter((s) => {
    const tag = s.requestId.slice(runId.length + 1, s.requestId.lastIndexOf("-"));
    const m = TAG.exec(tag);
    if (m === null) return false;
    const [, pct, ws, rate, repeat] = m;
    if (Number(pct) !== line.shared_prefix_pct) return false;
    if (ws !== undefined && Number(ws) !== (line.working_set ?? 1)) return false;
    if (rate !== undefined && Number(rate === "inf" ? Infinity : rate) !== (line.request_rate ?? Infinity)) return false;
    return repeat === undefined ? line.repeat === undefined : Number(repeat) === line.repeat;
  });
}

type DetailedLine = LineAxes & { sent?: number; completed?: number; failed?: number };

/** Each line's requests among its run's details when every line's are all there (as many as it sent), else null. */
export function lineSamples(lines: readonly DetailedLine[], details: readonly (readonly DetailSample[] | null)[]): DetailSample[][] | null {
  const out: DetailSample[][] = [];
  for (let i = 0; i < lines.length; i++) {
    const d = details[i];
    if (d === null || d === undefined) return null;
    const mine = samplesOfLine(lines[i]!, d);
    const sent = lines[i]!.sent ?? (lines[i]!.completed ?? 0) + (lines[i]!.failed ?? 0);
    if (mine.length === 0 || mine.length !== sent) return null;
    out.push(mine);
  }
  return out;
}

/** The union's statistics from each line's requests (lineSamples), or null without them. */
export const exactStats = (samples: readonly (readonly DetailSample[])[] | null): LatencyStats | null =>
  samples === null ? null : latencyStats(samples.flat());
