/** The capacity search against fake probes: a sharp threshold, a noisy one, cache failures, bounds and interrupts. */
import { describe, expect, test } from "bun:test";
import { MAX_PROBES, searchCapacity, type ProbeOutcome, type SearchConfig } from "../../../src/capacity/search.ts";
import { seededUniform as rng } from "../../../src/metrics/seeded-uniform.ts";

const GATE = "p99_ttft_ms<=500";
const pass: ProbeOutcome = { cacheOk: true, pass: true, failedGates: [] };
const fail: ProbeOutcome = { cacheOk: true, pass: false, failedGates: [GATE] };
const cacheBad: ProbeOutcome = { cacheOk: false, pass: true, failedGates: [] };

/** Passes exactly at loads <= capacity. */
const threshold = (capacity: number) => async (load: number) => (load <= capacity ? pass : fail);

const cfg = (more: Partial<SearchConfig> = {}): SearchConfig => ({
  start: 10,
  minLoad: 0.1,
  maxLoad: 10_000,
  precision: 0.05,
  confirm: 1,
  integer: false,
  ...more,
});

describe("searchCapacity with a sharp threshold", () => {
  for (const [what, start] of [
    ["2x above", 80],
    ["2x below", 20],
  ] as const) {
    test(`lands within 5 % of the truth from a start ${what}, in at most 8 probes`, async () => {
      const r = await searchCapacity(cfg({ start }), threshold(40));
      expect(r.status).toBe("found");
      const [lo, hi] = r.bracket as [number, number];
      expect(lo).toBeLessThanOrEqual(40);
      expect(hi).toBeGreaterThan(40);
      expect((hi - lo) / lo).toBeLessThanOrEqual(0.05);
      expect(r.capacity).toBe(lo);
      expect(40 - r.capacity!).toBeLessThanOrEqual(0.05 * 40);
      expect(r.probesSent).toBeLessThanOrEqual(8);
      expect(r.probesCounted).toBe(r.probesSent);
      expect(r.bindingGate).toBe(GATE);
      expect(r.reason).toBeNull();
    });
  }

  test("tighter precision costs more probes and lands closer", async () => {
    const loose = await searchCapacity(cfg({ start: 80, precision: 0.2 }), threshold(40));
    const tight = await searchCapacity(cfg({ start: 80, precision: 0.01 }), threshold(40));
    expect(tight.probesSent).toBeGreaterThan(loose.probesSent);
    expect(40 - tight.capacity!).toBeLessThanOrEqual(0.4);
    expect(40 - loose.capacity!).toBeGreaterThanOrEqual(0);
  });

  test("every probe stays inside the bounds and bisection stays inside the bracket", async () => {
    const r = await searchCapacity(cfg({ start: 3, minLoad: 1, maxLoad: 100 }), threshold(37));
    for (const p of r.probes) {
      expect(p.load).toBeGreaterThanOrEqual(1);
      expect(p.load).toBeLessThanOrEqual(100);
    }
    expect(r.probes.filter((p) => p.phase === "bracket").map((p) => p.load)).toEqual([3, 6, 12, 24, 48]);
    expect(r.capacity).toBeLessThanOrEqual(37);
  });

  test("a concurrency search finds the exact whole number", async () => {
    const r = await searchCapacity(cfg({ start: 3, minLoad: 1, maxLoad: 1024, integer: true }), threshold(13));
    expect(r.capacity).toBe(13);
    expect(r.bracket).toEqual([13, 14]);
    expect(r.probes.every((p) => Number.isInteger(p.load))).toBe(true);
  });

  test("a failure at the lowest load gives capacity 0 with the reason and the binding gate", async () => {
    const r = await searchCapacity(cfg({ start: 4, minLoad: 0.5 }), threshold(0.1));
    expect(r.status).toBe("below_min");
    expect(r.capacity).toBe(0);
    expect(r.bracket).toEqual([null, 0.5]);
    expect(r.reason).toContain("lowest load searched (0.5)");
    expect(r.reason).toContain(GATE);
    expect(r.bindingGate).toBe(GATE);
    expect(r.probes.map((p) => p.load)).toEqual([4, 2, 1, 0.5]);
  });

  test("every gate holding at the highest load gives that load and says the capacity is at least it", async () => {
    const r = await searchCapacity(cfg({ start: 10, maxLoad: 50 }), threshold(1e9));
    expect(r.status).toBe("at_max");
    expect(r.capacity).toBe(50);
    expect(r.bracket).toEqual([50, null]);
    expect(r.bindingGate).toBeNull();
    expect(r.reason).toContain("at least");
  });

  test("the wall time is the clock's, from the first probe to the verdict", async () => {
    let t = 1_000;
    const r = await searchCapacity(
      cfg({ start: 80 }),
      async (load) => {
        t += 2_500;
        return load <= 40 ? pass : fail;
      },
      undefined,
      () => t,
    );
    expect(r.wallS).toBeCloseTo(2.5 * r.probesSent, 6);
  });
});

describe("confirmation near the boundary", () => {
  test("one unlucky probe near the boundary does not decide it with --confirm 2", async () => {
    // The first probe at each load between 30 and 40 fails by bad luck; the next ones tell the truth.
    const unlucky = () => {
      const seen = new Set<number>();
      return async (load: number): Promise<ProbeOutcome> => {
        if (load > 30 && load <= 40 && !seen.has(load)) {
          seen.add(load);
          return fail;
        }
        return load <= 40 ? pass : fail;
      };
    };
    const once = await searchCapacity(cfg({ start: 80, confirm: 1 }), unlucky());
    const confirmed = await searchCapacity(cfg({ start: 80, confirm: 2 }), unlucky());
    expect(once.capacity!).toBeLessThan(0.95 * 40); // fooled: it believed the unlucky probe
    expect(confirmed.capacity!).toBeGreaterThanOrEqual(0.95 * 40);
    expect(confirmed.capacity!).toBeLessThanOrEqual(40);
    expect(confirmed.probes.some((p) => p.phase === "confirm")).toBe(true);
  });

  test("confirming costs only the final bracket's ends: --confirm 2 adds two probes to a clean search", async () => {
    for (const start of [80, 20, 33, 61]) {
      const once = await searchCapacity(cfg({ start, confirm: 1 }), threshold(40));
      const twice = await searchCapacity(cfg({ start, confirm: 2 }), threshold(40));
      expect(twice.capacity).toBe(once.capacity);
      expect(twice.probesSent).toBe(once.probesSent + 2);
    }
  });

  test("both ends of the final bracket carry --confirm agreeing votes", async () => {
    const r = await searchCapacity(cfg({ start: 80, confirm: 3 }), threshold(40));
    const [lo, hi] = r.bracket as [number, number];
    const votesAt = (load: number) => r.probes.filter((p) => p.load === load && p.counted).length;
    expect(votesAt(lo)).toBe(3);
    expect(votesAt(hi)).toBe(3);
  });

  test("a noisy server: the bracket holds the truth within its precision plus the noise, over many seeds", async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const u = rng(seed);
      // The probe's verdict is taken on a load that is off by up to ±2 %: a noisy measurement of a sharp capacity.
      const noisy = async (load: number): Promise<ProbeOutcome> => (load * (1 + (u() - 0.5) * 0.04) <= 40 ? pass : fail);
      const r = await searchCapacity(cfg({ start: 20 + 60 * u(), confirm: 2 }), noisy);
      expect(r.status).toBe("found");
      expect(r.capacity!).toBeGreaterThanOrEqual(40 * (1 - 0.05 - 0.02));
      expect(r.capacity!).toBeLessThanOrEqual(40 * 1.02);
      expect(r.probesSent).toBeLessThan(MAX_PROBES);
    }
  });
});

describe("cache checks and interrupts", () => {
  test("a probe with a failed cache check is repeated once and not counted", async () => {
    let calls = 0;
    const r = await searchCapacity(cfg({ start: 80 }), async (load, index) => {
      calls++;
      if (index === 1) return cacheBad; // the second probe (at 40) found the cache not as proven
      return load <= 40 ? pass : fail;
    });
    expect(r.status).toBe("found");
    expect(r.probes[1]!.counted).toBe(false);
    expect(r.probes[2]!.load).toBe(r.probes[1]!.load); // repeated at the same load
    expect(r.probes[2]!.counted).toBe(true);
    expect(r.probesSent).toBe(calls);
    expect(r.probesCounted).toBe(calls - 1);
    // Its "pass: true" was not counted: the verdicts match a search that never saw it.
    const clean = await searchCapacity(cfg({ start: 80 }), threshold(40));
    expect(r.capacity).toBe(clean.capacity);
    expect(r.probesCounted).toBe(clean.probesCounted);
  });

  test("a second failed cache check at a load ends the search with the reason, capacity unknown", async () => {
    const r = await searchCapacity(cfg({ start: 80 }), async (load) => (load === 40 ? cacheBad : load <= 40 ? pass : fail));
    expect(r.status).toBe("cache_unproven");
    expect(r.capacity).toBeNull();
    expect(r.reason).toContain("cache check failed twice at 40");
    expect(r.probes.filter((p) => p.load === 40).map((p) => p.counted)).toEqual([false, false]);
  });

  test("an interrupt stops the search with the probes so far, none of them counted after it", async () => {
    const ctl = new AbortController();
    const r = await searchCapacity(
      cfg({ start: 80 }),
      async (load, index) => {
        if (index === 2) ctl.abort();
        return load <= 40 ? pass : fail;
      },
      ctl.signal,
    );
    expect(r.status).toBe("interrupted");
    expect(r.capacity).toBeNull();
    expect(r.probesSent).toBe(3);
  });

  test("a probe interrupted midway is not a verdict", async () => {
    const r = await searchCapacity(cfg({ start: 80 }), async (_load, index) => (index === 1 ? { ...pass, interrupted: true } : fail));
    expect(r.status).toBe("interrupted");
    expect(r.probes[1]!.counted).toBe(false);
    expect(r.probesCounted).toBe(1);
  });
});
