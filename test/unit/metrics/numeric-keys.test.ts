import { expect, test } from "bun:test";
import { OWN_KEYS, SCRIPT_KEYS } from "../../../src/metrics/pct-record.ts";
import { NUMERIC_KEYS } from "../../../src/schema/keys.ts";
import schema from "../../fixtures/schema/pct-line.json";

test("the keys gates may name are exactly the pinned schema's numeric top-level keys, in line order", () => {
  const numeric = (schema.keys as Array<[string, string]>)
    .filter(([, type]) => type.replace(/\?$/, "").split("|").every((t) => t === "number" || t === "null"))
    .map(([key]) => key);
  expect([...NUMERIC_KEYS] as string[]).toEqual([...new Set(numeric)]);
});

test("gates and workload sit right after run in the pinned order", () => {
  expect(OWN_KEYS.slice(0, 4)).toEqual(["run_id", "run", "gates", "workload"]);
  const keys = (schema.keys as Array<[string]>).map(([k]) => k);
  expect(keys.slice(SCRIPT_KEYS.length, SCRIPT_KEYS.length + 4)).toEqual(["run_id", "run", "gates", "workload"]);
});
