/**
 * The option types are derived from the flag declarations (config/flags/declared-fields.ts): a bound field has its
 * parser's type (or that or null without a default), a field no declaration of the command binds is not there. tsc
 * runs on a fixture that reads fields wrong (test/fixtures/types/option-fields-wrong.ts, with its own tsconfig: the
 * main one leaves the folder out) and on the same fixture read right, which must compile: else the first proves nothing.
 */
import { describe, expect, test } from "bun:test";
import { compileFixtures, errorLines, fixtureText as read, TYPE_FIXTURES as DIR } from "../../helpers/type-fixtures.ts";

/** Each wrong read of option-fields-wrong.ts, and what option-fields-right.ts has instead. */
const FIXES = [
  ["limit: number = fields.limitMs", "limit: number | null = fields.limitMs"],
  ["label: number = fields.labelx", "label: string = fields.label"],
  ["seed: string = run.seed", "seed: bigint = run.seed"],
  ["run.probeRequests", "run.requestRates"],
  ["multiturn.numPrompts", "multiturn.numClients"],
] as const;

const results = compileFixtures(["option-fields-wrong", "option-fields-right"]);

describe("option types from the declarations", () => {
  test("the two fixtures are one file but for the reads", () => {
    let fixed = read("option-fields-wrong.ts");
    for (const [wrong, right] of FIXES) fixed = fixed.replaceAll(wrong, right);
    expect(fixed).toBe(read("option-fields-right.ts"));
  });

  test("a field read as another type, or one no declaration of the command binds, does not compile", async () => {
    const [wrong] = await results;
    expect(wrong!.code).not.toBe(0);
    const errors = errorLines(wrong!.out);
    const lines = read("option-fields-wrong.ts").split("\n");
    const at = (text: string) => errors.filter((e) => e.startsWith(`${DIR}/option-fields-wrong.ts(${lines.findIndex((l) => l.includes(text)) + 1},`));
    // One error a wrong read, on its own line; none elsewhere.
    expect(errors).toHaveLength(FIXES.length);
    expect(at("fields.limitMs").join("\n")).toContain("'number | null' is not assignable to type 'number'");
    expect(at("fields.labelx").join("\n")).toContain("labelx");
    expect(at("run.seed").join("\n")).toContain("'bigint' is not assignable to type 'string'");
    expect(at("run.probeRequests").join("\n")).toContain("'probeRequests' does not exist on type 'RunOptions'");
    expect(at("multiturn.numPrompts").join("\n")).toContain("'numPrompts' does not exist on type 'MultiturnOptions'");
  }, 60000);

  test("the same reads with the declared types compile", async () => {
    const [, right] = await results;
    expect(right!.out.trim()).toBe("");
    expect(right!.code).toBe(0);
  }, 60000);
});
