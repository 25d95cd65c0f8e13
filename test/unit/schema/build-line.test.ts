/** The one line builder: groups merged into the kind's key order; a key two groups give, or one the kind lacks, is refused. */
import { expect, test } from "bun:test";
import { buildLine } from "../../../src/schema/build-line.ts";
import { KEYS_OF } from "../../../src/schema/lines.ts";

test("groups become one line in the key table's order, schema_version set, undefined keys left out", () => {
  const line = buildLine("round", { health: { client_saturated: false }, round: { type: "round", round: 2, run: undefined }, provenance: { model: "m" } });
  expect(Object.keys(line)).toEqual(KEYS_OF.round.filter((k) => ["type", "round", "client_saturated", "model", "schema_version"].includes(k)));
  expect(line.schema_version).toBe(2);
  expect("run" in line).toBe(false);
});

test("a key given by two groups is refused, naming both", () => {
  expect(() => buildLine("sweep", { cache: { page_size: 16 }, producer: { page_size: 1 } })).toThrow("page_size is given by both cache and producer");
});

test("a key the kind does not carry is refused, naming the group (and does not compile: build-line-types.test.ts)", () => {
  // @ts-expect-error block_size is no key of a round line: the runtime check is for what the types cannot see.
  expect(() => buildLine("round", { replay: { block_size: 16 } })).toThrow("group replay gives block_size, which a round line does not carry");
});

test("every kind of measured line has the client's own lag its saturation verdict reads", () => {
  for (const kind of ["sweep", "round"] as const) expect(KEYS_OF[kind]).toContain("client_own_lag_p99_ms");
});
