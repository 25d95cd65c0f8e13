/**
 * The line builder is typed from the key table: a key a group gives that its kind does not carry (misspelt, or
 * another kind's) does not compile, whether in an object literal, spread from a variable, or a variable itself. tsc
 * runs on a fixture that does each (test/fixtures/types/misspelt-key.ts, with its own tsconfig: the main one leaves
 * the folder out), and on the same fixture with the keys spelt right, which must compile: else the first proves nothing.
 */
import { describe, expect, test } from "bun:test";
import { compileFixtures, errorLines, fixtureText as read, TYPE_FIXTURES as DIR } from "../../helpers/type-fixtures.ts";

/** Each wrong key of misspelt-key.ts, and what spelt-right.ts has instead. */
const FIXES = [
  ["p99_ttft_msx", "p99_ttft_ms"],
  ["client_cpu_pctx", "client_cpu_pct"],
  ['buildLine("round", { replay', 'buildLine("sweep", { replay'],
] as const;

const results = compileFixtures(["misspelt-key", "spelt-right"]);

describe("buildLine's types", () => {
  test("the two fixtures are one file but for the keys", () => {
    let fixed = read("misspelt-key.ts");
    for (const [wrong, right] of FIXES) fixed = fixed.replaceAll(wrong, right);
    expect(fixed).toBe(read("spelt-right.ts"));
  });

  test("a key its kind does not carry does not compile, the error naming it: in a literal, a spread variable, a variable", async () => {
    const [wrong] = await results;
    expect(wrong!.code).not.toBe(0);
    const errors = errorLines(wrong!.out);
    const lines = read("misspelt-key.ts").split("\n");
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1;
    const at = (line: number) => errors.filter((e) => e.startsWith(`${DIR}/misspelt-key.ts(${line},`));
    // One error a wrong key, on its own call, naming the key; none elsewhere.
    expect(errors).toHaveLength(4);
    expect(at(lineOf("p99_ttft_msx")).join("\n")).toContain("p99_ttft_msx");
    expect(at(lineOf("{ ...health }")).join("\n")).toContain("client_cpu_pctx is not a key of a sweep line");
    expect(at(lineOf("{ health })")).join("\n")).toContain("client_cpu_pctx is not a key of a sweep line");
    expect(at(lineOf("block_size: 16")).join("\n")).toContain("block_size");
  }, 60000);

  test("the same calls with every key spelt right compile, and the lines they build are typed as their kind's", async () => {
    const [, right] = await results;
    expect(right!.out.trim()).toBe("");
    expect(right!.code).toBe(0);
  }, 60000);
});
