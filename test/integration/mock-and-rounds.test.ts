/**
 * Small seams of 0.3 closed: the mock's own bad input is a usage error (exit 2, one line naming the flag) instead of
 * "internal error" exit 1 or an EISDIR per request in its log; and a multi-turn round whose every turn failed ends the
 * run with exit 1, as a sweep line whose every request failed does (0.3: exit 3).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-mock-rounds-"));
const mocks: MockServer[] = [];
afterAll(async () => {
  for (const m of mocks) await m.stop();
});

describe("warmbench mock: bad input is exit 2 naming the flag", () => {
  test("a missing tokenizer, a host that is no address, a directory as --truth, a port in use", async () => {
    const busy = await startMockServer(mockOptions({ port: 0 }));
    mocks.push(busy);
    const port = new URL(busy.url).port;
    const cases: [string[], string][] = [
      [["--tokenizer", "/nonexistent/tokenizer.json"], "--tokenizer /nonexistent/tokenizer.json: no such file"],
      [["--host", "999.1.1.1"], "--host 999.1.1.1: not an IP address"],
      [["--truth", dir], `--truth ${dir}: a directory`],
      [["--port", port], `--host 127.0.0.1 --port ${port}: cannot listen there (Is port ${port} in use?)`],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(["mock", ...args], { timeoutMs: 10_000 });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      // One line, the error's, naming the flag.
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr.trim()).toStartWith(`warmbench: error: ${message}`);
    }
  });
});

describe("a round whose every turn failed", () => {
  test("ends the run with exit 1, every round written as measured", async () => {
    // The server dies once the 3rd measured turn is admitted: round 0 (2 turns) is whole, round 1 loses both.
    const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, exitAfter: 3 }));
    mocks.push(mock);
    const out = join(dir, "dead-round.jsonl");
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--num-clients",
      "2",
      "--num-rounds",
      "3",
      "--turn-tokens",
      "16",
      "--output-len",
      "4",
      "--settle",
      "0",
      "--round-barrier",
      "--output-file",
      out,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("warmbench: error: All turns of round 1 failed (2 sent)");
    expect(readJsonl(out).map((l) => [l.round, l.completed, l.failed])).toEqual([
      [0, 2, 0],
      [1, 0, 2],
    ]);
  });
});
