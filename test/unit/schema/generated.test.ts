/** The generated files are what the key table gives today (rerun `bun scripts/gen-schema.ts` after changing it). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lineSchemaDocument, lineSchemaText, SCHEMA_PATH } from "../../../src/schema/document.ts";
import { KEYS, type KeyDef, type KeyName } from "../../../src/schema/key-table.ts";
import { KEYS_OF, kindsOf, numericKeysOf, OPTIONAL_KEYS, REPLAY_KEYS, FIDELITY_KEYS, REPLICA_KEYS } from "../../../src/schema/lines.ts";
import { keysReference, KEYS_DOC_PATH } from "../../../src/schema/reference.ts";
import { AXES, axesOf, kindOf, labelOf } from "../../../src/schema/axes.ts";
import { NUMERIC_KEYS } from "../../../src/schema/keys.ts";
import { OWN_KEYS, SCRIPT_KEYS } from "../../../src/schema/lines.ts";
import { ADDED_KEYS, GOLDEN_DIR, GOLDEN_RUNS } from "../../helpers/golden.ts";
import { readJsonl } from "../../helpers/results.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

test("the committed JSON Schema and docs/reference/keys.md are up to date", () => {
  expect(read(SCHEMA_PATH)).toBe(lineSchemaText());
  expect(read(KEYS_DOC_PATH)).toBe(keysReference());
});

test("every key of the table is carried by some line kind, and every listed key is in the table, once per kind", () => {
  for (const name of Object.keys(KEYS) as KeyName[]) expect(kindsOf(name).length).toBeGreaterThan(0);
  for (const keys of Object.values(KEYS_OF)) expect(new Set(keys).size).toBe(keys.length);
  for (const [kind, optional] of Object.entries(OPTIONAL_KEYS)) for (const k of optional) expect(KEYS_OF[kind as "sweep"]).toContain(k as never);
});

test("every key and every nested field of the schema has a description; every key with a unit names it", () => {
  const undocumented: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== "object" || node === null) return;
    const props = (node as { properties?: Record<string, Record<string, unknown>> }).properties;
    for (const [name, p] of Object.entries(props ?? {})) {
      if (typeof p.description !== "string" || p.description.length < 10) undocumented.push(`${at}${name}`);
      walk(p, `${at}${name}.`);
    }
    for (const v of Object.values(node as Record<string, unknown>)) if (typeof v === "object") walk(v, at);
  };
  walk(lineSchemaDocument(), "");
  expect(undocumented).toEqual([]);
  const sweep = (lineSchemaDocument().$defs as any).sweep_line.properties;
  for (const name of KEYS_OF.sweep) {
    const unit = (KEYS[name] as KeyDef).unit;
    if (unit !== null) expect(sweep[name].description).toContain(`Unit: ${unit}.`);
  }
});

test("the sweep's key lists are the table's: the script's first, gates and workload right after run, numeric keys in line order", () => {
  expect(OWN_KEYS.slice(0, 4)).toEqual(["run_id", "run", "gates", "workload"]);
  expect(SCRIPT_KEYS.every((k) => (KEYS[k] as KeyDef).script === true)).toBe(true);
  expect(SCRIPT_KEYS).toHaveLength(41);
  expect([...KEYS_OF.sweep]).toEqual([...SCRIPT_KEYS, ...OWN_KEYS]);
  expect(NUMERIC_KEYS).toEqual(numericKeysOf("sweep") as never);
  expect(NUMERIC_KEYS).toContain("p99_ttft_ms");
  expect(NUMERIC_KEYS).toContain("observed_hit_ratio");
  expect(NUMERIC_KEYS).not.toContain("working_set_fits" as never);
  expect(NUMERIC_KEYS).not.toContain("cache_check" as never);
  expect(NUMERIC_KEYS).not.toContain("schema_version" as never);
  // Every numeric key is one the recordings carry (test/fixtures/golden/), one added on purpose since (ADDED_KEYS, to
  // which the golden test holds the lines), an axis later producers add (repeat, probe, window), or a key of a group
  // no golden run fills (the trace replay's, the fidelity check's, the replicas'): a new key is listed once, where the
  // golden test reads it, and never counted by hand.
  const replayOwn: readonly string[] = REPLAY_KEYS;
  const fidelityOwn: readonly string[] = FIDELITY_KEYS;
  const replicaOwn: readonly string[] = REPLICA_KEYS;
  const recorded = new Set(GOLDEN_RUNS.flatMap((run) => readJsonl(join(GOLDEN_DIR, `${run.name}.jsonl`), { validate: false }).flatMap((l) => Object.keys(l))));
  const accounted = (k: string) =>
    recorded.has(k) ||
    ADDED_KEYS.has(k) ||
    ["repeat", "probe", "window"].includes(k) ||
    replayOwn.includes(k) ||
    fidelityOwn.includes(k) ||
    replicaOwn.includes(k);
  expect(NUMERIC_KEYS.filter((k) => !accounted(k))).toEqual([]);
  expect(NUMERIC_KEYS.filter((k) => !recorded.has(k) && ADDED_KEYS.has(k)) as string[]).toContain("retried_connections");
  // The groups' keys: all but the route and the per-replica list, the trace replay's ttft_by_cached_fraction, the
  // fidelity check's positions and note are numeric.
  expect(NUMERIC_KEYS.filter((k) => replicaOwn.includes(k))).toHaveLength(REPLICA_KEYS.length - 2);
  expect(NUMERIC_KEYS.filter((k) => replayOwn.includes(k))).toHaveLength(REPLAY_KEYS.length - 1);
  expect(NUMERIC_KEYS.filter((k) => fidelityOwn.includes(k))).toHaveLength(FIDELITY_KEYS.length - 2);
  expect(numericKeysOf("round")).toContain("round");
});

test("axes: the keys marked axis in the table are the axes lines are told apart by; a sweep line and a round line differ by them alone", () => {
  expect([...AXES].sort() as string[]).toEqual((Object.keys(KEYS) as KeyName[]).filter((k) => (KEYS[k] as KeyDef).axis === true).sort());
  const sweep = { shared_prefix_pct: 50, working_set: 4, request_rate: 8, mean_ttft_ms: 1 };
  const round = { type: "round", round: 3, working_set: 1, mean_ttft_ms: 1 };
  expect(kindOf(axesOf(sweep))).toBe("pct");
  expect(kindOf(axesOf(round))).toBe("round");
  expect(labelOf(sweep)).toBe("50% ws=4 @ 8 req/s");
  expect(labelOf({ shared_prefix_pct: 50, working_set: 1, request_rate: Infinity })).toBe("50%");
  expect(labelOf(round)).toBe("round 3");
  expect(labelOf({ shared_prefix_pct: 84, working_set: 1, request_rate: 20, window: 3 })).toBe("84% @ 20 req/s window 3");
});
