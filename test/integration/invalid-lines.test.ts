/**
 * Nothing passes unread: every consumer of a results file (compare, merge, history, report) reads it through one
 * reader, which refuses a line that breaks the published schema or a consistency rule with exit 2 naming the file,
 * the line, the rule and the key. Each case here passed before as if nothing were wrong (compare: "No regression").
 * Runs of the compiled binary on one mock run, edited.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-invalid-"));
let mock: MockServer;
let base: string;

/** A copy of `base` as a run of its own, with `edit` applied to its second line (the 80 % line). */
function edited(name: string, edit: (line: any) => any): string {
  const lines = readFileSync(base, "utf8")
    .trim()
    .split("\n")
    .map(parseJsonlLine)
    .map((l: any) => ({ ...l, run_id: name, evidence: { ...l.evidence, run_ids: [name] } }))
    .map((l: any, i: number) => (i === 1 ? edit(l) : l));
  const out = join(dir, `${name}.jsonl`);
  writeFileSync(out, lines.map(formatJsonl).join(""));
  return out;
}

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, ttftBaseMs: 20 }));
  base = join(dir, "base.jsonl");
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "0,80",
    "--num-prompts",
    "4",
    "--total-tokens",
    "400",
    "--output-len",
    "4",
    "--settle",
    "0",
    "--output-file",
    base,
  ]);
  if (r.code !== 0) throw new Error(`run exited ${r.code}: ${r.stderr}`);
});

afterAll(async () => {
  await mock.stop();
});

/** compare with limits no noise of this box trips: only the reader may refuse. */
const compare = (file: string) => runCli(["compare", base, file, "--max-regress", "mean_ttft_ms=1000%,p99_ttft_ms=1000%", "--allow-inconclusive"]);

describe("an invalid line is exit 2 naming the file, the line and the key", () => {
  test("the untouched copy compares clean (the cases below differ from it in one key)", async () => {
    const r = await compare(edited("clean", (l) => l));
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
  });

  test("compare: a NEW whose mean_ttft_ms is Infinity is refused, not 'No regression'", async () => {
    const file = edited("inf", (l) => ({ ...l, mean_ttft_ms: Infinity }));
    expect(readFileSync(file, "utf8")).toContain('"mean_ttft_ms": Infinity');
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (finite numbers): mean_ttft_ms: Infinity is not a finite number`);
    expect(r.stdout).not.toContain("No regression");
  });

  test('compare: a NEW whose mean_ttft_ms is "fast" is refused', async () => {
    const file = edited("fast", (l) => ({ ...l, mean_ttft_ms: "fast" }));
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (the published JSON Schema (warmbench schema)): mean_ttft_ms: "fast" is not a number or null`);
  });

  test("compare: a NEW with a negative latency is refused", async () => {
    const file = edited("negative", (l) => ({ ...l, p99_ttft_ms: -1 }));
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (non-negative counts and latencies): p99_ttft_ms: -1 is negative`);
  });

  test("compare: a 0.4 line without its evidence block is refused", async () => {
    const file = edited("no-evidence", ({ evidence: _, ...l }) => l);
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (an evidence block in every line since 0.4): evidence: missing`);
  });

  test("compare: an evidence block with no samples is refused", async () => {
    const file = edited("no-samples", (l) => ({ ...l, evidence: { ...l.evidence, samples: {} } }));
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (the published JSON Schema (warmbench schema)): evidence.samples.ttft: missing`);
  });

  test("compare: an evidence block that disagrees with the line is refused", async () => {
    const file = edited("disagrees", (l) => ({ ...l, evidence: { ...l.evidence, requests: { ...l.evidence.requests, finished: l.completed + 1 } } }));
    const r = await compare(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (the evidence block agreeing with the line): evidence.requests.finished`);
  });

  test("merge: a line with completed -1 is refused, and nothing is written", async () => {
    const file = edited("minus-one", (l) => ({ ...l, completed: -1 }));
    const out = join(dir, "merged.jsonl");
    const r = await runCli(["merge", base, file, "-o", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid`);
    expect(r.stderr).toContain("completed: -1 is negative");
    expect(existsSync(out)).toBe(false);
  });

  test("report: a line of a schema_version newer than this build is refused", async () => {
    const file = edited("future", (l) => ({ ...l, schema_version: 999 }));
    const r = await runCli(["report", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (a schema_version this build knows): schema_version: 999 is newer than this build reads`);
  });

  test("history add: a file with Infinity is refused and nothing is stored", async () => {
    const file = edited("history-inf", (l) => ({ ...l, mean_ttft_ms: Infinity }));
    const db = join(dir, "h.db");
    const r = await runCli(["history", "add", base, file, "--db", db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} line 2 is invalid (finite numbers): mean_ttft_ms`);
    if (existsSync(db)) {
      const h = new Database(db, { readonly: true });
      expect(h.query("SELECT count(*) AS n FROM runs").get()).toEqual({ n: 0 });
      h.close();
    }
  });

  test("Infinity where the writer puts it (request_rate of a closed loop) is read, as the script writes it", async () => {
    expect(readFileSync(base, "utf8")).toContain('"request_rate": Infinity');
    const r = await runCli(["report", base]);
    expect(r.code).toBe(0);
  });
});
