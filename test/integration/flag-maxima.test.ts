/**
 * Every size is bounded before anything is sent: the largest value of every numeric flag of every measuring command,
 * generated from the flag declarations (a flag added later is tried too), is refused with exit 2 naming the flag and
 * its most, or, for the few whose any value is meaningful, makes a run that ends by itself. 0.3 took
 * `--num-clients 100000000000` and grew to 23 GB, and `--total-tokens 2000000000` spun drawing prompts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENT_FLAGS, flagsFor } from "../../src/config/flags/index.ts";
import type { CommandName } from "../../src/config/flags/types.ts";
import { FLAG_MAXIMA } from "../../src/config/bounds.ts";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { generateTrace, traceText } from "../helpers/mooncake-trace.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-maxima-"));
const HUGE = "99999999999999";
let mock: MockServer;
const trace = join(dir, "trace.jsonl");

/** Flags that take a number (their default is one, or they have a most). */
const NUMERIC_NO_DEFAULT = new Set([
  "duration",
  "repeat",
  "repeat-until-cv",
  "workers",
  "page-size",
  "num-prompts",
  "cache-tokens",
  "first-turn-tokens",
  "start",
]);
const isNumeric = (name: string, dflt: unknown): boolean =>
  name in FLAG_MAXIMA || NUMERIC_NO_DEFAULT.has(name) || typeof dflt === "number" || (typeof dflt === "string" && /^[\d.,%]+$/.test(dflt) && dflt !== "");

/** Flags whose any value is meaningful, with why: the run they make at 10^14 must still end by itself. */
const ANY_VALUE: Record<string, string> = {
  seed: "a Python int of any size seeds random.Random",
  "request-rate": "a rate past what the client can send is sent as fast as it can, and the line says load_not_sustained",
  burstiness: "a gamma shape past 10^3 is evenly spaced arrivals",
  "cache-tokens": "a cache larger than the trace predicts every hit",
  start: "a start past the trace leaves no request: refused as an empty replay",
};

const base = (command: CommandName, out: string): string[] => {
  const server = ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--settle", "0", "--output-file", out];
  switch (command) {
    case "run":
      return [...server, "--total-tokens", "100", "--output-len", "2", "--num-prompts", "2", "--pcts", "50", "--quiet"];
    case "multiturn":
      return ["multiturn", ...server, "--num-clients", "2", "--num-rounds", "2", "--turn-tokens", "16", "--output-len", "2"];
    case "capacity":
      return [
        "capacity",
        ...server,
        "--pcts",
        "50",
        "--total-tokens",
        "100",
        "--output-len",
        "2",
        "--num-prompts",
        "4",
        "--bracket",
        "1:4",
        "--gate",
        "p99_ttft_ms<=100000",
        "--quiet",
      ];
    case "replay":
      return ["replay", trace, "--block-size", "16", ...server, "--time-scale", "0.01", "--quiet"];
    default:
      throw new Error(command);
  }
};

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 0, ttftBaseMs: 1 }));
  writeFileSync(
    trace,
    traceText(
      generateTrace({
        blockSize: 16,
        systems: 1,
        systemBlocks: 2,
        conversations: 2,
        turns: 2,
        maxTurnTokens: 20,
        turnGapMs: 100,
        startGapMs: 50,
        outputLength: 2,
        seed: 1,
      }),
    ),
  );
});
afterAll(() => mock.stop());

describe("the largest value of every numeric flag", () => {
  for (const command of ["run", "multiturn", "capacity", "replay"] as const) {
    const numeric = flagsFor(CLIENT_FLAGS, command).filter((f) => f.type === "string" && isNumeric(f.name, f.default));
    test(`${command}: ${numeric.length} numeric flags at ${HUGE}: exit 2 naming the flag, or a run that ends by itself`, async () => {
      expect(numeric.length).toBeGreaterThan(5);
      const outcomes: string[] = [];
      for (const f of numeric) {
        // --port is ignored beside --base-url: tried alone, without one.
        const args =
          f.name === "port" || f.name === "host"
            ? base(command, join(dir, `${command}-${f.name}.jsonl`)).filter((a, i, all) => a !== "--base-url" && all[i - 1] !== "--base-url")
            : base(command, join(dir, `${command}-${f.name}.jsonl`));
        const r = await runCli([...args, `--${f.name}`, HUGE], { timeoutMs: 60_000 });
        if (f.name in ANY_VALUE) {
          outcomes.push(`${f.name}: ${r.code === 2 ? "refused" : "ran"}`);
          expect([f.name, r.code === null || r.code === 143 || r.code === 137]).toEqual([f.name, false]);
          continue;
        }
        const named = r.stderr.includes(`--${f.name}`);
        outcomes.push(`${f.name}: exit ${r.code}${named ? "" : ` (${r.stderr.trim().split("\n").at(-1)})`}`);
        expect([f.name, r.code, named]).toEqual([f.name, 2, true]);
      }
      expect(outcomes.length).toBe(numeric.length);
    }, 600_000);
  }
});
