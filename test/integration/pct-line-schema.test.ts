/**
 * The published schema (schema/warmbench-line.schema.json, validated with ajv): every line the compiled binary writes
 * conforms - sweep lines of both backend families, with failures, at a finite rate and a working set, and multi-turn
 * round lines - and `warmbench schema` prints exactly the committed document. readJsonl validates every results line
 * any test reads; this file proves the validator itself catches what it must.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER, ROOT, runCli } from "../helpers/run-cli.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";
import { SCHEMA_VERSION } from "../../src/schema/lines.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-schema-"));
const SMALL = ["--model", LLAMA2_TOKENIZER, "--num-prompts", "6", "--total-tokens", "400", "--output-len", "3", "--settle", "0"];

async function sweep(name: string, args: string[], faults = {}): Promise<any[]> {
  const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, prefillUsPerToken: 1, ...faults }));
  const out = join(dir, `${name}.jsonl`);
  try {
    const r = await runCli([...SMALL, "--base-url", mock.url, "--output-file", out, ...args]);
    expect([0, 3]).toContain(r.code);
    return readSweepLines(out); // validates every line against the schema
  } finally {
    await mock.stop();
  }
}

describe("every line the binary writes matches the published schema", () => {
  test("sglang, two pcts: the first line carries run, every line schema_version", async () => {
    const lines = await sweep("sglang", ["--backend", "sglang", "--pcts", "0,60"]);
    expect(lines).toHaveLength(2);
    expect("run" in lines[0]).toBe(true);
    expect("run" in lines[1]).toBe(false);
    for (const l of lines) expect(l.schema_version).toBe(SCHEMA_VERSION);
    // The new key sits right after warmbench_version; the script's keys still come first.
    const keys = Object.keys(lines[1]);
    expect(keys[keys.indexOf("warmbench_version") + 1]).toBe("schema_version");
    expect(keys[0]).toBe("backend");
  });

  test("vllm with failures, a finite request rate and a working set of 2", async () => {
    const lines = await sweep("vllm", ["--backend", "vllm", "--pcts", "50", "--request-rate", "40,inf", "--working-set", "2"], { failEvery: 3 });
    expect(lines.map((l) => l.request_rate)).toEqual([40, "Infinity"]);
    expect(lines.some((l) => l.failed > 0)).toBe(true);
  });

  test("multi-turn round lines", async () => {
    const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, ttftBaseMs: 1 }));
    const out = join(dir, "rounds.jsonl");
    try {
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
        "--shared-system-tokens",
        "32",
        "--turn-tokens",
        "32",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--output-file",
        out,
      ]);
      expect(r.code).toBe(0);
    } finally {
      await mock.stop();
    }
    const rounds = readJsonl(out);
    expect(rounds.map((l) => [l.type, l.round, l.schema_version])).toEqual([0, 1, 2].map((n) => ["round", n, SCHEMA_VERSION]));
  });

  test("a reader slower than the pipe still gets the whole document (the 224 KB schema was cut at 64 KB)", async () => {
    const proc = Bun.spawn([BINARY, "schema"], { stdout: "pipe", stderr: "ignore" });
    // This process reads nothing until the binary has had every chance to exit (the event loop held): the pipe holds
    // 64 KB, the rest must wait for it.
    Bun.sleepSync(400);
    const text = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(text).toBe(readFileSync(join(ROOT, "schema/warmbench-line.schema.json"), "utf8"));
  });

  test("`warmbench schema` prints the committed document", async () => {
    const r = await runCli(["schema"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(ROOT, "schema/warmbench-line.schema.json"), "utf8"));
    expect(JSON.parse(r.stdout).$schema).toBe("https://json-schema.org/draft/2020-12/schema");
  });
});

describe("the validator catches what it must", () => {
  let line: any;
  test("a real line of each kind conforms", async () => {
    line = (await sweep("mutate", ["--pcts", "50"]))[0];
    expect(schemaProblems(line)).toEqual([]);
  });

  test("an extra key, a missing key, a wrong type, a wrong enum, a nested extra key, the key order", () => {
    expect(schemaProblems({ ...line, surprise: 1 }).join()).toContain("surprise");
    const { sent: _sent, ...missing } = line;
    expect(schemaProblems(missing).join()).toContain("sent");
    expect(schemaProblems({ ...line, completed: "3" }).join()).toContain("/completed");
    expect(schemaProblems({ ...line, completed: 2.5 }).join()).toContain("/completed must be integer");
    expect(schemaProblems({ ...line, cache_check: "fine" }).join()).toContain("/cache_check");
    expect(schemaProblems({ ...line, ttft_model: { ...line.ttft_model, fixedMs: 1 } }).join()).toContain("fixedMs");
    expect(schemaProblems({ ...line, schema_version: SCHEMA_VERSION + 1 }).join()).toContain("/schema_version");
    const { backend, ...rest } = line;
    expect(schemaProblems({ ...rest, backend }).join()).toContain("out of order");
  });

  test("Python's non-finite tokens are numbers where the key is a float, and nowhere else", () => {
    expect(schemaProblems({ ...line, mean_ttft_ms: "NaN", burstiness: "Infinity" })).toEqual([]);
    expect(schemaProblems({ ...line, completed: "NaN" }).join()).toContain("/completed");
    expect(schemaProblems({ ...line, mean_ttft_ms: "inf" }).join()).toContain("/mean_ttft_ms");
  });

  test("a sweep line is not a round line: type is closed to round lines, round keys to sweep lines", () => {
    expect(schemaProblems({ ...line, type: "round" }).length).toBeGreaterThan(0);
    expect(schemaProblems({ ...line, round: 0 }).join()).toContain("round");
  });
});
