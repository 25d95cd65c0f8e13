/**
 * The capacity search for one pct, as a pure function of a probe: start from an estimate, bracket geometrically (grow
 * or shrink by `growth` until one load passes and one fails), then bisect (geometric midpoint: the precision is
 * relative) until the bracket is within `precision`. Near the boundary (the final bracket's ends, before they are
 * believed) a verdict needs `confirm` agreeing probes out of at most 2·confirm-1, so one lucky or unlucky probe does
 * not decide it: any wrong verdict that bounds the result is an end of the final bracket. A probe whose cache check failed is evidence of nothing: it is repeated once,
 * and a second failure ends the search at that load with the reason (never counted as a pass or a fail).
 * Nothing here sends a request: `probe` does (src/capacity/run-probe.ts), tests pass a fake.
 */

/** What one probe at one load found. */
export interface ProbeOutcome {
  /** The cache was flushed, proven empty, warmed and every request's cached tokens checked out. */
  cacheOk: boolean;
  /** Every gate held (meaningless when !cacheOk). */
  pass: boolean;
  /** The gates that failed, as written (`p99_ttft_ms<=500`), with the value seen: the first is the binding one. */
  failedGates: readonly string[];
  /** The run was interrupted during the probe: the search stops, the probe is not a verdict. */
  interrupted?: boolean;
}

/** A probe as the search used it. */
interface ProbeLog {
  /** 0-based order within this pct's search. */
  index: number;
  load: number;
  outcome: ProbeOutcome;
  /** Counted as a vote: false for a failed cache check or an interrupted probe. */
  counted: boolean;
  /** Why it was sent: "bracket", "bisect" or "confirm". */
  phase: "bracket" | "bisect" | "confirm";
}

export interface SearchConfig {
  /** The first load to probe (clamped into [minLoad, maxLoad]). */
  start: number;
  minLoad: number;
  maxLoad: number;
  /** Relative width of the final bracket, (hi - lo) / lo, e.g. 0.05. */
  precision: number;
  /** Agreeing probes a verdict near the boundary needs (1: one probe decides). */
  confirm: number;
  /** Loads are whole numbers (a concurrency). */
  integer: boolean;
  /** Bracketing factor (2: doubling and halving). */
  growth?: number;
}

type SearchStatus = "found" | "below_min" | "at_max" | "cache_unproven" | "interrupted" | "probe_limit";

/** A guard against a probe so noisy that the votes never settle: far above what any search here needs. */
export const MAX_PROBES = 64;

export interface SearchResult {
  /** The highest load at which every gate held; 0 when the lowest fails; null when the search could not decide. */
  capacity: number | null;
  /** [highest passing, lowest failing]; null where no such load was found. */
  bracket: [number | null, number | null];
  /** The first gate to fail at the bracket's failing end. */
  bindingGate: string | null;
  status: SearchStatus;
  /** Why the capacity is 0, the maximum or unknown; null when found. */
  reason: string | null;
  /** Probes counted as votes, and all probes sent (cache-failed ones included). */
  probesCounted: number;
  probesSent: number;
  wallS: number;
  probes: ProbeLog[];
}

export type Probe = (load: number, index: number) => Promise<ProbeOutcome>;

interface Votes {
  pass: number;
  fail: number;
  failedGates: readonly string[] | null;
}

/** Stops the search with a status (a cache check that failed twice, an interrupt). */
class Stop {
  constructor(
    readonly status: SearchStatus,
    readonly reason: string,
  ) {}
}

const show = (v: number): string => String(Number(v.toPrecision(6)));

/** Runs the search; `now` (ms) is injected so tests can check the reported wall time. */
export async function searchCapacity(cfg: SearchConfig, probe: Probe, signal?: AbortSignal, now: () => number = Date.now): Promise<SearchResult> {
  const began = now();
  const growth = cfg.growth ?? 2;
  const round = (v: number): number => (cfg.integer ? Math.max(cfg.minLoad, Math.round(v)) : v);
  const clamp = (v: number): number => Math.min(cfg.maxLoad, Math.max(cfg.minLoad, round(v)));
  const votes = new Map<number, Votes>();
  const probes: ProbeLog[] = [];

  const verdict = (load: number, need: number): boolean | null => {
    const v = votes.get(load);
    if (v === undefined) return null;
    if (v.pass >= need && v.pass > v.fail) return true;
    if (v.fail >= need && v.fail > v.pass) return false;
    return null;
  };

  /** One counted vote at `load`: a failed cache check is repeated once, then stops the search. */
  const vote = async (load: number, phase: ProbeLog["phase"]): Promise<void> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (signal?.aborted) throw new Stop("interrupted", "interrupted before the search ended");
      if (probes.length >= MAX_PROBES)
        throw new Stop("probe_limit", `${MAX_PROBES} probes did not settle the verdicts: the server's latency is too noisy for this --confirm`);
      const outcome = await probe(load, probes.length);
      const counted = outcome.cacheOk && outcome.interrupted !== true;
      probes.push({ index: probes.length, load, outcome, counted, phase });
      if (outcome.interrupted === true) throw new Stop("interrupted", `interrupted during the probe at ${show(load)}`);
      if (!counted) continue;
      const v = votes.get(load) ?? { pass: 0, fail: 0, failedGates: null };
      if (outcome.pass) v.pass++;
      else {
        v.fail++;
        v.failedGates ??= outcome.failedGates;
      }
      votes.set(load, v);
      return;
    }
    throw new Stop("cache_unproven", `the cache check failed twice at ${show(load)}: that load could not be judged`);
  };

  /** The verdict at `load` with `need` agreeing votes, probing until one side has them. */
  const judge = async (load: number, need: number, phase: ProbeLog["phase"]): Promise<boolean> => {
    for (;;) {
      const known = verdict(load, need);
      if (known !== null) return known;
      await vote(load, votes.has(load) ? "confirm" : phase);
    }
  };

  /** The bracket the votes so far support: the lowest failing load, and the highest passing load below it. */
  const bracket = (need: number): [number | null, number | null] => {
    const loads = [...votes.keys()].sort((a, b) => a - b);
    const hi = loads.find((l) => verdict(l, need) === false) ?? null;
    const lo = loads.filter((l) => (hi === null || l < hi) && verdict(l, need) === true).at(-1) ?? null;
    return [lo, hi];
  };

  const narrow = (lo: number, hi: number): boolean => (hi - lo) / lo <= cfg.precision || (cfg.integer && hi - lo <= 1);

  const finish = (status: SearchStatus, reason: string | null): SearchResult => {
    const [lo, hi] = bracket(1);
    const capacity = status === "below_min" ? 0 : status === "found" || status === "at_max" ? lo : null;
    return {
      capacity,
      bracket: [lo, hi],
      bindingGate: hi === null ? null : (votes.get(hi)?.failedGates?.[0] ?? null),
      status,
      reason,
      probesCounted: probes.filter((p) => p.counted).length,
      probesSent: probes.length,
      wallS: (now() - began) / 1000,
      probes,
    };
  };

  try {
    await judge(clamp(cfg.start), 1, "bracket");
    for (;;) {
      // Bracket ends from single probes are only believed once confirmed.
      const [lo, hi] = bracket(1);
      if (lo === null && hi !== null) {
        if (hi <= cfg.minLoad) {
          if (await judge(hi, cfg.confirm, "confirm")) continue;
          const gate = votes.get(hi)?.failedGates?.[0] ?? "a gate";
          return finish("below_min", `fails at the lowest load searched (${show(cfg.minLoad)}): ${gate}`);
        }
        await judge(clamp(hi / growth), 1, "bracket");
      } else if (hi === null && lo !== null) {
        if (lo >= cfg.maxLoad) {
          if (!(await judge(lo, cfg.confirm, "confirm"))) continue;
          return finish("at_max", `every gate holds at the highest load searched (${show(cfg.maxLoad)}): the capacity is at least that`);
        }
        await judge(clamp(lo * growth), 1, "bracket");
      } else if (lo !== null && hi !== null) {
        if (narrow(lo, hi)) {
          // Confirm both ends; a flip moves the bracket and the search goes on.
          if ((await judge(lo, cfg.confirm, "confirm")) && !(await judge(hi, cfg.confirm, "confirm"))) return finish("found", null);
          continue;
        }
        const mid = round(Math.sqrt(lo * hi));
        const next = mid <= lo ? lo + 1 : mid >= hi ? hi - 1 : mid;
        // One probe per bisection load: a wrong verdict that matters ends up an end of the final bracket, where it
        // is confirmed (and flipped) before the search ends.
        await judge(next, 1, "bisect");
      } else {
        throw new Error("unreachable: the first probe gave no verdict");
      }
    }
  } catch (err) {
    if (err instanceof Stop) return finish(err.status, err.reason);
    throw err;
  }
}
