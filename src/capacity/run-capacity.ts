/**
 * The capacity search over every pct: for each, an estimate (unless --start), then the search (search.ts), each
 * probe one measured point made by `measure` - reset and prove the cache, warm, send at the probe's load, summarize
 * into a line whose gates are judged on it - written as it ends, then one capacity line. Which code measures a point
 * is the caller's (the command line gives the measurement engine's): nothing here sends a request.
 */
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import type { CapacityOptions, SearchMode } from "../config/capacity-options.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import { orderLine, type CapacityRecord } from "../schema/lines.ts";
import { searchCapacity, type ProbeOutcome, type SearchResult } from "./search.ts";

/** The load of one point: a request rate (open loop) or a concurrency (closed loop). */
export interface Load {
  search: SearchMode;
  /** req/s for a rate; requests in flight for a concurrency; Infinity: a closed loop at --max-concurrency (the estimate). */
  value: number;
}

export interface CapacityIo {
  /** Measures one point at `load` for `pct` (one flush, proof, warm and send); the line is returned, not yet written. */
  measure(pct: number, load: Load): Promise<PctRecord>;
  /** A probe's line, with its `probe` axis, as soon as it is measured. */
  probe(line: PctRecord): void;
  /** A pct's result, after its probes. */
  capacity(line: CapacityRecord, result: SearchResult): void;
  signal?: AbortSignal;
}

export interface CapacityOutcome {
  lines: CapacityRecord[];
  interrupted: boolean;
}

/**
 * Whether a probe's cache state was proven: the engine's own verdict (flushed and proven empty, and the requests'
 * cached tokens as expected within --cache-tolerance, which also governs a warm that did not take).
 */
export const cacheProven = (r: PctRecord): boolean => r.cache_check === "ok";

/** A probe's line as the search reads it. */
export function outcomeOf(r: PctRecord): ProbeOutcome {
  const failed = r.gates.filter((g) => !g.pass).map((g) => `${g.expr} (${g.value === null ? "unmeasured" : Number(g.value.toPrecision(4))})`);
  return { cacheOk: cacheProven(r), pass: failed.length === 0, failedGates: failed, interrupted: r.interrupted };
}

/** The line with its place in the search: key order as every sweep line's. */
const withProbe = (r: PctRecord, probe: number, runId: string, first: boolean): PctRecord =>
  orderLine("sweep", { ...r, probe, run_id: runId, run: first ? r.run : undefined }) as PctRecord;

export async function runCapacity(opts: CapacityOptions, io: CapacityIo, runId: string): Promise<CapacityOutcome> {
  const lines: CapacityRecord[] = [];
  let written = 0;
  for (const pct of opts.run.pcts) {
    if (io.signal?.aborted) return { lines, interrupted: true };
    const began = Date.now();
    let index = 0;
    let seen: PctRecord | null = null;
    const measured = async (load: Load): Promise<PctRecord> => {
      const line = withProbe(await io.measure(pct, load), index++, runId, written === 0);
      written++;
      seen ??= line;
      io.probe(line);
      return line;
    };
    const start = opts.start ?? (await estimate(opts, measured));
    if (start === null) return { lines, interrupted: true };
    log.info(`${pct}%: searching the ${opts.search === "rate" ? "request rate" : "concurrency"} from ${start} within ${opts.bracket.join(":")} ...`);
    const result = await searchCapacity(
      { start, minLoad: opts.bracket[0], maxLoad: opts.bracket[1], precision: opts.precision, confirm: opts.confirm, integer: opts.search === "concurrency" },
      async (value) => outcomeOf(await measured({ search: opts.search, value })),
      io.signal,
    );
    // The estimate is measured like a probe: it counts in the probes sent (and the time), not as a vote.
    const sent = { ...result, probesSent: index, wallS: (Date.now() - began) / 1000 };
    const line = capacityLine(opts, pct, sent, runId, seen);
    lines.push(line);
    io.capacity(line, sent);
    if (result.status === "interrupted") return { lines, interrupted: true };
  }
  return { lines, interrupted: false };
}

/**
 * The first load: a rate search starts at the throughput of a closed-loop point at --max-concurrency (what the server
 * carries when it is never idle: the capacity at a latency SLO is at most that); a concurrency search at 4, run's
 * default. The estimate is written as a probe (it is measured like one) but is no vote. Null: interrupted.
 */
async function estimate(opts: CapacityOptions, measured: (load: Load) => Promise<PctRecord>): Promise<number | null> {
  const [lo, hi] = opts.bracket;
  if (opts.search === "concurrency") return Math.min(hi, Math.max(lo, 4));
  const line = await measured({ search: "rate", value: Infinity });
  if (line.interrupted) return null;
  const rate = line.request_throughput;
  const start = Number.isFinite(rate) && rate > 0 ? rate : lo;
  return Math.min(hi, Math.max(lo, Number(start.toPrecision(3))));
}

/** One pct's capacity line. */
export function capacityLine(opts: CapacityOptions, pct: number, r: SearchResult, runId: string, probe: PctRecord | null): CapacityRecord {
  const o = opts.run;
  const capacity = r.capacity;
  return orderLine("capacity", {
    type: "capacity",
    run_id: runId,
    shared_prefix_pct: pct,
    working_set: o.workingSets[0],
    search: opts.search,
    capacity_request_rate: opts.search === "rate" ? capacity : null,
    capacity_concurrency: opts.search === "concurrency" ? capacity : null,
    capacity_bracket: r.bracket,
    binding_gate: r.bindingGate,
    capacity_status: r.status,
    capacity_reason: r.reason,
    probes_counted: r.probesCounted,
    probes_sent: r.probesSent,
    search_wall_s: r.wallS,
    precision: opts.precision,
    confirm: opts.confirm,
    backend: o.backend,
    total_tokens: o.totalTokens,
    output_len: o.outputLen,
    burstiness: opts.search === "rate" ? o.burstiness : null,
    warmbench_version: probe?.warmbench_version ?? VERSION,
    started_at: probe?.started_at ?? new Date().toISOString(),
    model: o.model,
    seed: o.seed.toString(),
    base_url: o.baseUrl,
    server_version: probe?.server_version ?? null,
  }) as CapacityRecord;
}
