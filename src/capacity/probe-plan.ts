/**
 * A probe as a line to measure: one pct at the probe's load - one rate (open loop) or one concurrency (closed loop),
 * its request count (--num-prompts, or --duration's arrivals at the rate) - with nothing written by the session
 * itself (the search writes its probe lines).
 */
import type { CapacityOptions } from "../config/capacity-options.ts";
import type { SearchMode } from "../config/capacity-defaults.ts";
import type { RunOptions } from "../config/options.ts";
import type { SearchPoint } from "../engine/session.ts";

/** The load of one point: a request rate (open loop) or a concurrency (closed loop). */
export interface Load {
  search: SearchMode;
  /** req/s for a rate; requests in flight for a concurrency; Infinity: a closed loop at --max-concurrency (the estimate). */
  value: number;
}

/** One probe: a pct at a load, and its place in the pct's search (0-based, in the order sent). */
export interface Probe {
  pct: number;
  load: Load;
  probe: number;
}

/** The probe's run options: one pct, one line at the probe's load. */
export function probeOptions(o: CapacityOptions, pct: number, load: Load): RunOptions {
  const rate = load.search === "rate" && Number.isFinite(load.value) ? load.value : Infinity;
  // --duration: the rate's arrivals over that time, at least one request.
  const numPrompts = o.probeDurationS !== null && Number.isFinite(rate) ? Math.max(1, Math.round(rate * o.probeDurationS)) : o.probeRequests;
  return {
    ...o.run,
    pcts: [pct],
    requestRates: [rate],
    numPrompts,
    durationS: null,
    maxConcurrency: load.search === "concurrency" ? load.value : o.run.maxConcurrency,
    outputFile: null,
    requestDetails: null,
    dumpPrompts: null,
  };
}

/** What live progress calls a probe: its pct and load. */
function probeLabel(p: Pick<Probe, "pct" | "load">): string {
  const { load } = p;
  const at = load.search === "rate" ? (Number.isFinite(load.value) ? `${load.value} req/s` : "closed loop (estimate)") : `concurrency ${load.value}`;
  return `${p.pct}% ${at}`;
}

/** The line a probe is: the search's first working-set size (a search varies the load, not the cache's pressure). */
export function probePlan(o: CapacityOptions, p: Probe): SearchPoint {
  return { pct: p.pct, workingSet: o.run.workingSets[0]!, opts: probeOptions(o, p.pct, p.load), probe: p.probe, label: probeLabel(p) };
}
