/**
 * The capacity search over every pct: for each, an estimate (unless --start), then the search (search.ts), each
 * probe one measured point - reset and prove the cache, warm, send at the probe's load, summarize into a line whose
 * gates are judged on it - written as it ends, then one capacity line. Each probe is planned here as a line
 * (probe-plan.ts) and measured by the engine's PointSession the caller hands in (prepared once; the sweep's cell
 * gives its prompts): nothing here sends a request, and no other producer is imported.
 */
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import type { CapacityOptions } from "../config/capacity-options.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { SearchPoint, PointSession } from "../engine/session.ts";
import { probePlan, type Load } from "./probe-plan.ts";
import { judgeEvidence } from "../metrics/evidence-check.ts";
import { sampleFamilyOf } from "../schema/key-table.ts";
import type { CapacityRecord } from "../schema/lines.ts";
import { buildLine } from "../schema/build-line.ts";
import { searchCapacity, type ProbeOutcome, type SearchResult } from "./search.ts";

export interface CapacityIo {
  /**
   * The engine's session, prepared once for the whole search (tokenizer, backend, preflight): each call measures one
   * probe (one flush, proof, warm and send, summarized); the line is returned, not yet written.
   */
  session: PointSession<SearchPoint>;
  /** A probe's line, with its `probe` axis, as soon as it is measured. */
  probe(line: SweepLine): void;
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
export const cacheProven = (r: SweepLine): boolean => r.cache_check === "ok";

/** A probe's line as the search reads it. */
export function outcomeOf(r: SweepLine): ProbeOutcome {
  // A probe counts only a load the server carried: the evidence check fails it whatever its latency gates say.
  const problems = judgeEvidence("capacity_probe", r)
    .filter((p) => p.defect !== "interrupted")
    .map((p) => p.text.replace(/^load_not_sustained: /, "load not sustained: "));
  const failed = r.gates
    .filter((g) => !g.pass && !g.evidence?.some((e) => e.startsWith("load_not_sustained")))
    .map((g) => `${g.expr} (${g.value === null ? "unmeasured" : Number(g.value.toPrecision(4))})`);
  // Failed requests are no carried load: a probe with failures fails unless a gate on `failed` says how many may fail.
  const judgesFailures = r.gates.some((g) => /^failed\b/.test(g.expr));
  const lost = (r.failed ?? 0) > 0 && !judgesFailures ? [`${r.failed} of ${r.sent} requests failed (a gate on failed allows some)`] : [];
  return {
    cacheOk: cacheProven(r),
    pass: failed.length === 0 && problems.length === 0 && lost.length === 0,
    failedGates: [...problems, ...lost, ...failed],
    interrupted: r.interrupted,
  };
}

export async function runCapacity(opts: CapacityOptions, io: CapacityIo): Promise<CapacityOutcome> {
  // The session's run: its probe lines carry it (the engine's builder writes run_id, the probe axis and the header).
  const runId = io.session.runId;
  const fromSend = (opts.run.gates ?? []).filter((g) => ["ttft", "tpot", "itl", "e2e"].includes(sampleFamilyOf(g.metric) ?? ""));
  if (opts.search === "rate" && opts.run.maxConcurrency > 0 && fromSend.length > 0) {
    log.warn(
      `capacity: ${fromSend.map((g) => g.expr).join(", ")} read(s) latency from the send, while --max-concurrency ${opts.run.maxConcurrency} queues ` +
        "requests once the rate outgrows it: that wait shows only in ttft_from_intended_* (gate those to count it). A probe whose offered rate was " +
        'not sent on schedule fails as "load not sustained" whatever its gates say.',
    );
  }
  const lines: CapacityRecord[] = [];
  for (const pct of opts.run.pcts) {
    if (io.signal?.aborted) return { lines, interrupted: true };
    const began = Date.now();
    let index = 0;
    let seen: SweepLine | null = null;
    // The last probe measured at each load: the one at the result's load lends the capacity line its evidence.
    const atLoad = new Map<number, SweepLine>();
    let last: SweepLine | null = null;
    const measured = async (load: Load): Promise<SweepLine> => {
      const line = await io.session.measure(probePlan(opts, { pct, load, probe: index++ }));
      seen ??= line;
      last = line;
      atLoad.set(load.value, line);
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
    const line = capacityLine(opts, pct, sent, runId, seen, carrierProbe(result, atLoad, last));
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
async function estimate(opts: CapacityOptions, measured: (load: Load) => Promise<SweepLine>): Promise<number | null> {
  const [lo, hi] = opts.bracket;
  if (opts.search === "concurrency") return Math.min(hi, Math.max(lo, 4));
  const line = await measured({ search: "rate", value: Infinity });
  if (line.interrupted) return null;
  const rate = line.request_throughput;
  const start = Number.isFinite(rate) && rate > 0 ? rate : lo;
  return Math.min(hi, Math.max(lo, Number(start.toPrecision(3))));
}

/**
 * The probe whose evidence the capacity rests on: the highest passing load's (found, at_max), the lowest failing
 * load's (below_min: capacity 0 because it failed), else the last probe measured; null when none was.
 */
export function carrierProbe(r: Pick<SearchResult, "status" | "bracket">, atLoad: ReadonlyMap<number, SweepLine>, last: SweepLine | null): SweepLine | null {
  const [lo, hi] = r.bracket;
  const at = r.status === "below_min" ? hi : r.status === "found" || r.status === "at_max" ? lo : null;
  return (at === null ? undefined : atLoad.get(at)) ?? last;
}

/**
 * A rate the server carried: the offered rate counts only the requests that finished. A probe with failures passes
 * only where a gate on failed allowed them, and a server that fails every 2nd request carries half what it was sent.
 */
export function carriedRate(offered: number | null, carrier: SweepLine | null): number | null {
  if (offered === null || offered === 0 || carrier?.evidence === undefined) return offered;
  const { sent, finished } = carrier.evidence.requests;
  if (sent === 0 || finished >= sent) return offered;
  return Number(((offered * finished) / sent).toPrecision(6));
}

/** One pct's capacity line. */
function capacityLine(opts: CapacityOptions, pct: number, r: SearchResult, runId: string, probe: SweepLine | null, carrier: SweepLine | null): CapacityRecord {
  const o = opts.run;
  const capacity = r.capacity;
  return buildLine("capacity", {
    verdict: {
      type: "capacity",
      run_id: runId,
      shared_prefix_pct: pct,
      working_set: o.workingSets[0],
      search: opts.search,
      capacity_request_rate: opts.search === "rate" ? carriedRate(capacity, carrier) : null,
      capacity_concurrency: opts.search === "concurrency" ? capacity : null,
      capacity_bracket: r.bracket,
      binding_gate: r.bindingGate,
      search_gates: (o.gates ?? []).map((g) => g.expr),
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
      ...(carrier?.evidence === undefined ? {} : { evidence: carrier.evidence }),
      warmbench_version: probe?.warmbench_version ?? VERSION,
      started_at: probe?.started_at ?? new Date().toISOString(),
      model: o.model,
      seed: o.seed.toString(),
      base_url: o.baseUrl,
      server_version: probe?.server_version ?? null,
    },
  });
}
