/** The capacity producer over pcts with a fake point measurement: probe numbering, one run id, the estimate, the lines. */
import { describe, expect, test } from "bun:test";
import type { CapacityOptions } from "../../../src/config/capacity-options.ts";
import type { SweepLine } from "../../../src/metrics/sweep-line.ts";
import { cacheProven, carriedRate, carrierProbe, outcomeOf, runCapacity } from "../../../src/capacity/run-capacity.ts";
import type { Load } from "../../../src/capacity/probe-plan.ts";
import { evaluateGates } from "../../../src/gates/evaluate.ts";
import { parseGate } from "../../../src/gates/parse.ts";
import type { CapacityRecord } from "../../../src/schema/lines.ts";
import type { SearchPoint } from "../../../src/engine/session.ts";

const GATE = "ttft_from_intended_p99_ms<=500";

/** A point whose gate holds below `capacity` (its closed-loop throughput is `closedLoop`). */
function fakePoint(pct: number, load: Load, capacity: number, closedLoop: number, cache: SweepLine["cache_check"] = "ok"): SweepLine {
  const rate = Number.isFinite(load.value) ? load.value : Infinity;
  const p99 = rate <= capacity ? 200 : 900;
  return {
    run_id: "inner",
    run: { fake: true },
    shared_prefix_pct: pct,
    request_rate: rate,
    max_concurrency: 0,
    request_throughput: Number.isFinite(rate) ? rate : closedLoop,
    gates: [{ expr: GATE, value: p99, pass: p99 <= 500 }],
    cache_check: cache,
    interrupted: false,
    warmbench_version: "9.9.9",
    started_at: "2026-01-01T00:00:00.000Z",
    server_version: "mock",
    completed: 10,
  } as unknown as SweepLine;
}

const options = (more: Partial<CapacityOptions> = {}): CapacityOptions => ({
  run: {
    pcts: [0, 90],
    workingSets: [1],
    backend: "sglang",
    totalTokens: 100,
    outputLen: 10,
    burstiness: Infinity,
    model: "m",
    seed: 42n,
    baseUrl: "http://x",
  } as CapacityOptions["run"],
  search: "rate",
  probeRequests: 10,
  probeDurationS: null,
  precision: 0.05,
  confirm: 1,
  start: null,
  bracket: [0.1, 1000],
  require: [],
  ...more,
});

async function run(opts: CapacityOptions, capacityAt: (pct: number) => number, cache: (index: number) => SweepLine["cache_check"] = () => "ok") {
  const probes: SweepLine[] = [];
  const lines: CapacityRecord[] = [];
  let n = 0;
  // As the engine's session does: each line of its run, the probe's place as its axis, the run's header on its first.
  const session = {
    runId: "outer",
    // The search plans each probe as a line (capacity/probe-plan.ts): its load is in the line's options.
    measure: async ({ pct, opts: line, probe }: SearchPoint) => {
      const load: Load = opts.search === "rate" ? { search: "rate", value: line.requestRates[0]! } : { search: "concurrency", value: line.maxConcurrency };
      const { run, ...measured } = fakePoint(pct, load, capacityAt(pct), 2 * capacityAt(pct), cache(n));
      return { ...measured, run_id: "outer", probe, ...(n++ === 0 ? { run } : {}) } as SweepLine;
    },
    close: async () => {},
  };
  const outcome = await runCapacity(opts, { session, probe: (l) => probes.push(l), capacity: (l) => lines.push(l) });
  return { probes, lines, outcome };
}

describe("runCapacity", () => {
  test("one search per pct: its probes numbered from 0, one run id, `run` in the first line only, then its capacity line", async () => {
    const { probes, lines, outcome } = await run(options(), (pct) => (pct === 0 ? 10 : 30));
    expect(outcome.interrupted).toBe(false);
    expect(lines.map((l) => l.shared_prefix_pct)).toEqual([0, 90]);
    for (const pct of [0, 90]) {
      const mine = probes.filter((p) => p.shared_prefix_pct === pct);
      expect(mine.map((p) => p.probe)).toEqual(mine.map((_, i) => i));
      expect(lines.find((l) => l.shared_prefix_pct === pct)!.probes_sent).toBe(mine.length);
    }
    expect(probes.every((p) => p.run_id === "outer")).toBe(true);
    expect(probes.map((p) => "run" in p)).toEqual(probes.map((_, i) => i === 0));
    expect(lines[0]!.capacity_request_rate).toBeGreaterThanOrEqual(9.5);
    expect(lines[0]!.capacity_request_rate).toBeLessThanOrEqual(10);
    expect(lines[1]!.capacity_request_rate).toBeGreaterThanOrEqual(28.5);
    expect(lines[0]!.capacity_concurrency).toBeNull();
    expect(lines[0]!.binding_gate).toBe(`${GATE} (900)`);
    expect([lines[0]!.warmbench_version, lines[0]!.server_version, lines[0]!.seed]).toEqual(["9.9.9", "mock", "42"]);
  });

  test("without --start the first probe is a closed loop whose throughput is the estimate: written, not a vote", async () => {
    const { probes, lines } = await run(options({ run: { ...options().run, pcts: [0] } }), () => 10);
    expect(probes[0]!.request_rate).toBe(Infinity);
    expect(probes[1]!.request_rate).toBe(20); // the closed loop's throughput
    expect(lines[0]!.probes_counted).toBe(probes.length - 1);
    expect(lines[0]!.probes_sent).toBe(probes.length);
  });

  test("--start skips the estimate", async () => {
    const { probes } = await run(options({ start: 7, run: { ...options().run, pcts: [0] } }), () => 10);
    expect(probes[0]!.request_rate).toBe(7);
  });

  test("a probe whose cache check failed is a probe line but no vote", async () => {
    const { probes, lines } = await run(
      options({ start: 20, run: { ...options().run, pcts: [0] } }),
      () => 10,
      (i) => (i === 1 ? "mismatch" : "ok"),
    );
    expect(probes[1]!.cache_check).toBe("mismatch");
    expect(probes[2]!.request_rate).toBe(probes[1]!.request_rate);
    expect(lines[0]!.probes_counted).toBe(probes.length - 1);
    expect(cacheProven(probes[1]!)).toBe(false);
  });
});

/** A probe's line as the engine writes it: its evidence, and its gates judged on it by the one evaluation. */
function probeLine(over: { sustained?: boolean; itlSamples?: number; p99ItlMs?: number | null; failed?: number }, gates: string[]): SweepLine {
  const line = {
    sent: 16,
    completed: 16 - (over.failed ?? 0),
    failed: over.failed ?? 0,
    shared_prefix_pct: 90,
    request_rate: 100,
    working_set: 1,
    probe: 3,
    interrupted: false,
    cache_check: "ok",
    p99_ttft_ms: 40,
    p99_itl_ms: over.p99ItlMs === undefined ? 9 : over.p99ItlMs,
    evidence: {
      samples: { ttft: 16, tpot: 16, itl: over.itlSamples ?? 112, e2e: 16, from_intended: 16, schedule_lag: 16 },
      requests: { planned: 16, sent: 16, finished: 16 },
      complete: true,
      load: {
        offered_request_rate: 100,
        achieved_request_rate: over.sustained === false ? 24.8 : 99,
        offered_concurrency: null,
        achieved_concurrency: 3,
        sustained: over.sustained ?? true,
      },
      cache: { flush_proven: true, warm_proven: true, per_request: "ok" },
      client_healthy: true,
      run_ids: ["r"],
    },
    gates: [] as unknown[],
  };
  line.gates = evaluateGates(
    gates.map((g) => parseGate(g)),
    line,
  );
  return line as unknown as SweepLine;
}

describe("a probe counts only on evidence", () => {
  test("capacity never reports a load the server did not carry", () => {
    // 0.3: a 3-slot server "passed" 100 req/s while the client sent 24.8 req/s (its --max-concurrency queued the rest).
    const carried = outcomeOf(probeLine({}, ["p99_ttft_ms<=52"]));
    expect(carried.pass).toBe(true);
    const queued = outcomeOf(probeLine({ sustained: false }, ["p99_ttft_ms<=52"]));
    expect(queued.pass).toBe(false);
    expect(queued.failedGates).toEqual(["load not sustained: offered 100 req/s, sent at 24.8 req/s"]);
    // Without any gate too: the load itself is the evidence.
    expect(outcomeOf(probeLine({ sustained: false }, [])).pass).toBe(false);
  });

  test("failed requests are no carried load: a probe with failures fails unless a gate on failed allows them", () => {
    // 0.4: a 3-slot server failing every 2nd request was reported as carrying 25.95 req/s (its true capacity 12.49).
    const failing = outcomeOf(probeLine({ failed: 8 }, ["p99_ttft_ms<=52"]));
    expect(failing.pass).toBe(false);
    expect(failing.failedGates).toEqual(["8 of 16 requests failed (a gate on failed allows some)"]);
    expect(outcomeOf(probeLine({ failed: 8 }, ["p99_ttft_ms<=52", "failed<=8"])).pass).toBe(true);
    expect(outcomeOf(probeLine({ failed: 9 }, ["failed<=8"])).pass).toBe(false);
    expect(outcomeOf(probeLine({}, ["p99_ttft_ms<=52"])).pass).toBe(true);
  });

  test("a capacity probe with no sample for its gate's metric fails", () => {
    const none = outcomeOf(probeLine({ itlSamples: 0, p99ItlMs: null }, ["p99_itl_ms<=50"]));
    expect(none.pass).toBe(false);
    expect(none.failedGates).toEqual(["p99_itl_ms<=50 (unmeasured)"]);
  });
});

describe("the capacity line rests on the probe that set it", () => {
  const withRequests = (sent: number, finished: number): SweepLine => ({ evidence: { requests: { planned: sent, sent, finished } } }) as unknown as SweepLine;
  const at = new Map([
    [8, withRequests(24, 24)],
    [16, withRequests(24, 12)],
  ]);
  const last = withRequests(24, 6);

  test("found and at_max: the highest passing load's probe; below_min: the lowest failing load's; else the last", () => {
    expect(carrierProbe({ status: "found", bracket: [8, 16] }, at, last)).toBe(at.get(8)!);
    expect(carrierProbe({ status: "at_max", bracket: [16, null] }, at, last)).toBe(at.get(16)!);
    expect(carrierProbe({ status: "below_min", bracket: [null, 8] }, at, last)).toBe(at.get(8)!);
    expect(carrierProbe({ status: "interrupted", bracket: [8, 16] }, at, last)).toBe(last);
  });

  test("a rate counts only the requests that finished; none failed, the rate as offered", () => {
    expect(carriedRate(16, at.get(16)!)).toBe(8);
    expect(carriedRate(8, at.get(8)!)).toBe(8);
    expect(carriedRate(0, last)).toBe(0);
    expect(carriedRate(null, last)).toBeNull();
  });
});
