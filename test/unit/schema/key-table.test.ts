/**
 * The key table's evidence properties (issue 26): each key says which evidence count it rests on (`samples`) and what
 * a run must be to measure it (`measuredOnlyWith`); the evidence check and the gates' plan read them, never a name.
 * And its place: which line kinds carry it and where (`lines`), why a line may leave it out (`optional`), how merge
 * makes it (`merge`).
 */
import { describe, expect, test } from "bun:test";
import { KEYS, LINE_KINDS, MERGE_RULES, measuredOnlyWithOf, OPTIONAL_BECAUSE, sampleFamilyOf, type KeyDef } from "../../../src/schema/key-table.ts";
import { KEYS_OF } from "../../../src/schema/lines.ts";
import { RULES } from "../../../src/report/merge-rules.ts";
import { checkGatesMeasurable } from "../../../src/gates/plan.ts";
import { parseGates } from "../../../src/gates/parse.ts";

const names = Object.keys(KEYS);

describe("key table: evidence properties", () => {
  test("every latency statistic rests on its own series' samples", () => {
    for (const [series, family] of [
      ["ttft", "ttft"],
      ["tpot", "tpot"],
      ["itl", "itl"],
      ["e2e_latency", "e2e"],
    ] as const) {
      const keys = names.filter((n) => new RegExp(`^(mean|median|std|p90|p99)_${series}_ms$`).test(n));
      expect(keys.length).toBeGreaterThanOrEqual(4);
      for (const key of keys) expect([key, sampleFamilyOf(key)]).toEqual([key, family]);
    }
    for (const key of names.filter((n) => /_from_intended_/.test(n))) expect(sampleFamilyOf(key)).toBe("from_intended");
    for (const key of names.filter((n) => n.startsWith("schedule_lag_"))) expect(sampleFamilyOf(key)).toBe("schedule_lag");
    for (const key of names.filter((n) => n.endsWith("_throughput") || n.endsWith("_throughput_retokenized"))) expect(sampleFamilyOf(key)).toBe("finished");
  });

  test("the study keys rest on the study's samples and say what measures them", () => {
    const fidelity = names.filter((n) => n.startsWith("fidelity_"));
    const ledger = names.filter((n) => n.startsWith("ledger_") || n.startsWith("loss_") || n === "routing_imbalance");
    expect(fidelity.length).toBeGreaterThan(5);
    expect(ledger.length).toBeGreaterThan(10);
    for (const key of fidelity) expect([key, sampleFamilyOf(key), measuredOnlyWithOf(key)]).toEqual([key, "fidelity", "check-fidelity"]);
    for (const key of ledger) expect([key, sampleFamilyOf(key), measuredOnlyWithOf(key)]).toEqual([key, "ledger", "replicas"]);
    // Nothing else is measured only by some runs.
    const others = names.filter((n) => (KEYS[n as keyof typeof KEYS] as KeyDef).measuredOnlyWith !== undefined && !fidelity.includes(n) && !ledger.includes(n));
    expect(others).toEqual([]);
  });

  test("a name the table does not hold has no family (never guessed from its spelling)", () => {
    expect(sampleFamilyOf("p99_ttft_ms_of_something")).toBeNull();
    expect(measuredOnlyWithOf("fidelity_made_up")).toBeNull();
  });

  test("a gate on a key this run does not measure is refused, naming what measures it", () => {
    const gates = parseGates("fidelity_diverged==0\nloss_routing_ratio<=0.05\np99_ttft_ms<=500", undefined);
    expect(() => checkGatesMeasurable(gates, { "check-fidelity": false, replicas: true })).toThrow("fidelity_diverged is measured only with --check-fidelity");
    expect(() => checkGatesMeasurable(gates, { "check-fidelity": true, replicas: false })).toThrow("loss_routing_ratio is measured only with several replicas");
    expect(() => checkGatesMeasurable(gates, { "check-fidelity": true, replicas: true })).not.toThrow();
  });
});

describe("key table: where each key sits and how it merges", () => {
  const defs = Object.entries(KEYS) as [string, KeyDef][];

  test("in each kind of line no two keys share an ordinal, and every kind's keys are written in ascending ordinal", () => {
    for (const kind of LINE_KINDS) {
      const ordinals = defs.flatMap(([, d]) => (d.lines[kind] === undefined ? [] : [d.lines[kind]]));
      expect(new Set(ordinals).size).toBe(ordinals.length);
      expect(KEYS_OF[kind].map((k) => (KEYS[k] as KeyDef).lines[kind])).toEqual([...ordinals].sort((a, b) => a - b));
    }
  });

  test("every merge rule and every reason to be optional is one some key names (none is left over)", () => {
    expect(new Set<string>(defs.map(([, d]) => d.merge))).toEqual(new Set(Object.keys(MERGE_RULES)));
    expect(new Set<string>(defs.flatMap(([, d]) => (d.optional === undefined ? [] : [d.optional])))).toEqual(new Set(Object.keys(OPTIONAL_BECAUSE)));
  });

  test("merge has a rule for every key but the two it writes itself, from the rule the table names", () => {
    expect(Object.keys(RULES).sort()).toEqual(names.filter((n) => !["run", "schema_version"].includes(n)).sort());
    expect(defs.filter(([, d]) => d.merge === "none").map(([n]) => n)).toEqual(["run", "schema_version"]);
  });
});
