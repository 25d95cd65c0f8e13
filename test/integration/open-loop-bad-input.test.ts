/** Bad --request-rate / --burstiness / --duration values: one line naming the flag, exit 2, before anything is sent. */
import { describe, expect, test } from "bun:test";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

// Nothing listens on port 9: the flags must be refused before the server matters.
const base = ["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--total-tokens", "100", "--settle", "0"];

const cases: Array<[string, string[], RegExp]> = [
  ["a rate of 0", ["--request-rate", "0"], /^warmbench: error: --request-rate 0: a rate must be > 0/],
  ["a negative rate in a list", ["--request-rate", "4,-2"], /^warmbench: error: --request-rate -2: a rate must be > 0/],
  ["a rate that is not a number", ["--request-rate", "fast"], /^warmbench: error: --request-rate: expected a number of requests\/s or inf, got "fast"/],
  ["an empty rate list", ["--request-rate", ","], /^warmbench: error: --request-rate ",": no rate given/],
  ["a burstiness of 0", ["--request-rate", "5", "--burstiness", "0"], /^warmbench: error: --burstiness 0: must be > 0/],
  ["a negative burstiness", ["--request-rate", "5", "--burstiness", "-1"], /^warmbench: error: --burstiness -1: must be > 0/],
  ["a burstiness without a finite rate", ["--burstiness", "4"], /^warmbench: error: --burstiness 4: .*needs a finite --request-rate/],
  ["a duration of 0", ["--request-rate", "5", "--duration", "0"], /^warmbench: error: --duration 0: must be > 0/],
  ["a negative duration", ["--request-rate", "5", "--duration", "-3"], /^warmbench: error: --duration -3: must be > 0/],
  ["an infinite duration", ["--request-rate", "5", "--duration", "inf"], /^warmbench: error: --duration: expected a number of seconds, got "inf"/],
  ["a duration without a rate", ["--duration", "10"], /^warmbench: error: --duration 10: needs a finite --request-rate/],
  ["a duration with inf among the rates", ["--request-rate", "5,inf", "--duration", "10"], /^warmbench: error: --duration 10: needs a finite --request-rate/],
  [
    "a duration and --num-prompts",
    ["--request-rate", "5", "--duration", "10", "--num-prompts", "9"],
    /^warmbench: error: --duration: not with --num-prompts: --num-prompts is the other way to stop a line/,
  ],
  [
    "a duration in which no request is due",
    ["--request-rate", "0.01", "--duration", "1"],
    /^warmbench: error: --duration 1: at 0.01 req\/s no request is due within 1 s/,
  ],
  [
    "a duration of too many requests",
    ["--request-rate", "1e6", "--duration", "3600"],
    /^warmbench: error: --duration 3600: rate x duration = 3600000000 requests per line/,
  ],
];

describe("bad open-loop flags: exit 2, one line naming the flag", () => {
  for (const [name, flags, message] of cases) {
    test(name, async () => {
      const r = await runCli([...base, ...flags]);
      expect(r.code).toBe(2);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("warmbench: "));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(message);
      expect(r.stdout).toBe("");
    });
  }
});
