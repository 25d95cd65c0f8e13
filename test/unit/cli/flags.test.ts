import { describe, expect, test } from "bun:test";
import { COMMAND_NAMES } from "../../../src/config/flags/types.ts";
import { ALL_FLAGS, argsOf, checkedArgv, flagsOf } from "../../../src/cli/flags.ts";
import { normalizeFlags } from "../../../src/cli/normalize.ts";

test("a repeatable flag is collected into one value, joined by newlines, in order", () => {
  expect(checkedArgv("run", ["--gate", "failed==0", "--seed", "1", "--gate=p99_ttft_ms<=5@pct>=90", "--gate", "x<1"])).toEqual([
    "--seed",
    "1",
    "--gate=failed==0\np99_ttft_ms<=5@pct>=90\nx<1",
  ]);
});

test("report takes any number of files", () => {
  expect(checkedArgv("report", ["a.jsonl", "b.jsonl", "--html", "r.html", "c.jsonl"])).toEqual(["a.jsonl", "b.jsonl", "--html", "r.html", "c.jsonl"]);
  expect(() => normalizeFlags(["a.jsonl", "b.jsonl"], argsOf("report"))).toThrow('unexpected argument "b.jsonl"');
  expect(() => checkedArgv("compare", ["a.jsonl", "b.jsonl", "c.jsonl"])).toThrow('unexpected argument "c.jsonl"');
});

test("abbreviations expand per command: the same prefix means another flag in another command", () => {
  expect(checkedArgv("run", ["--num-p", "8"])).toEqual(["--num-prompts", "8"]);
  expect(checkedArgv("multiturn", ["--num-c", "8"])).toEqual(["--num-clients", "8"]);
  expect(() => checkedArgv("run", ["--num-c", "8"])).toThrow('unknown flag "--num-c"');
  expect(() => checkedArgv("multiturn", ["--num", "8"])).toThrow('ambiguous flag "--num" could match --num-clients, --num-rounds');
});

test("the demo refuses the server flags by name, with the reason", () => {
  expect(() => checkedArgv("demo", ["--port=1"])).toThrow("--port: the demo runs against its own mock server");
});

describe("declarations", () => {
  test("no command takes two flags of one name, and every flag has help", () => {
    for (const command of COMMAND_NAMES) {
      const names = flagsOf(command).map((f) => f.name);
      expect(new Set(names).size).toBe(names.length);
      for (const f of flagsOf(command)) expect(f.help.length).toBeGreaterThan(10);
    }
  });

  test("every declaration belongs to a command, and a default is shown in the help", () => {
    for (const decl of ALL_FLAGS) expect(Object.keys(decl.commands).length).toBeGreaterThan(0);
    expect(argsOf("demo")["num-prompts"]?.description).toBe("Prompts per shared-prefix percentage (default: 16)");
    expect(argsOf("run")["num-prompts"]?.description).toBe("Prompts per shared-prefix percentage (default: 64)");
    expect(argsOf("multiturn")["num-prompts"]).toBeUndefined();
  });
});
