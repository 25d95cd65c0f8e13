/**
 * The pinned output schema: every pct line the compiled binary writes has exactly the keys of
 * test/fixtures/schema/pct-line.json, in order, with their types - for both backends, with and without failures.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readPctLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-schema-"));

describe("every pct line matches the pinned schema", () => {
  for (const [name, backend, faults] of [["sglang", "sglang", {}], ["vllm with failures", "vllm", { failEvery: 3 }]] as const) {
    test(name, async () => {
      const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, prefillUsPerToken: 1, ...faults }));
      const out = join(dir, `${backend}.jsonl`);
      try {
        const r = await runCli([
          "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--backend", backend, "--pcts", "0,60", "--num-prompts", "6",
          "--total-tokens", "400", "--output-len", "3", "--settle", "0", "--output-file", out,
        ]);
        expect([0, 3]).toContain(r.code);
        const lines = readPctLines(out);
        expect(lines).toHaveLength(2);
        for (const line of lines) expect(schemaProblems(line)).toEqual([]);
        expect("run" in lines[0]).toBe(true);
        expect("run" in lines[1]).toBe(false);
      } finally {
        await mock.stop();
      }
    });
  }

  test("the checker itself catches an extra key, a missing key, a wrong type and a nested difference", async () => {
    const mock = await startMockServer(mockOptions({ port: 0, itlMs: 1 }));
    const out = join(dir, "mutate.jsonl");
    try {
      await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", "50", "--num-prompts", "2", "--total-tokens", "100", "--output-len", "2", "--settle", "0", "--output-file", out]);
      const line = readPctLines(out)[0];
      expect(schemaProblems(line)).toEqual([]);
      expect(schemaProblems({ ...line, surprise: 1 })[0]).toContain("extra: surprise");
      const { sent: _sent, ...missing } = line;
      expect(schemaProblems(missing)[0]).toContain("missing: sent");
      expect(schemaProblems({ ...line, completed: "3" })).toContain("completed: string, expected number");
      expect(schemaProblems({ ...line, ttft_model: { ...line.ttft_model, fixedMs: 1 } }).join()).toContain("ttft_model.");
    } finally {
      await mock.stop();
    }
  });
});
