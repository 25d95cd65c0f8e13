/**
 * The table of bad inputs (test/bad-inputs/cases.ts, rendered into docs/reference/bad-inputs.md): each is given to
 * the compiled binary, which must exit as the table says with one error line naming the culprit, before any
 * generation request reaches the mock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { Database } from "bun:sqlite";
import { BAD_INPUTS, FORGED_PASSPORTS, SOUND_PASSPORT } from "../bad-inputs/cases.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-bad-inputs-"));
let mock: MockServer;
const files: Record<string, string> = {};

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 0, ttftBaseMs: 1 }));
  for (const name of ["A", "B"]) {
    files[name] = join(dir, `${name}.jsonl`);
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0",
      "--num-prompts",
      "2",
      "--total-tokens",
      "64",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      files[name]!,
    ]);
    if (r.code !== 0) throw new Error(r.stderr);
  }
  const line = readFileSync(files.A!, "utf8");
  const write = (name: string, content: string | Uint8Array) => {
    files[name] = join(dir, `${name.toLowerCase()}.jsonl`);
    writeFileSync(files[name]!, content);
  };
  write("TORN", line + line.slice(0, 30));
  write("BIN", new Uint8Array([0x7b, 0x00, 0xff, 0x0a]));
  write("EMPTY", "");
  write("FOREIGN", '{"foo":1}\n');
  const b = parseJsonlLine(readFileSync(files.B!, "utf8").trim());
  const invalid = (name: string, line: Record<string, unknown>) => write(name, formatJsonl({ ...line, run_id: name.toLowerCase() }));
  invalid("INF", { ...b, mean_ttft_ms: Infinity });
  invalid("FAST", { ...b, mean_ttft_ms: "fast" });
  invalid("NEG", { ...b, p99_ttft_ms: -1 });
  const { evidence, ...withoutEvidence } = b;
  invalid("NO_EVIDENCE", withoutEvidence);
  invalid("NO_SAMPLES", { ...b, evidence: { ...evidence, samples: {} } });
  invalid("MINUS_ONE", { ...b, completed: -1 });
  invalid("FUTURE", { ...b, schema_version: 999 });
  files.MOCK_LOCALHOST = mock.url.replace("127.0.0.1", "localhost");
  files.PASSPORT_PAGE_E18 = join(dir, "passport-page-e18.json");
  writeFileSync(
    files.PASSPORT_PAGE_E18,
    JSON.stringify({
      kind: "warmbench-passport",
      version: 1,
      warmbench_version: "0.4.0",
      engine: "sglang",
      server_version: null,
      page_size_tokens: { value: 1e18, method: "forged", uncertainty: "exact", why: null },
    }),
  );
  for (const [name, over] of Object.entries(FORGED_PASSPORTS)) {
    files[name] = join(dir, `${name.toLowerCase()}.json`);
    writeFileSync(files[name]!, JSON.stringify({ ...SOUND_PASSPORT, ...over }));
  }
  // A history of {A} whose table of lines was dropped (every command refuses it, naming it, and leaves it as it is).
  files.DB_DROPPED = join(dir, "dropped.db");
  const added = await runCli(["history", "add", files.A!, "--db", files.DB_DROPPED]);
  if (added.code !== 0) throw new Error(added.stderr);
  const db = new Database(files.DB_DROPPED);
  db.run("DROP TABLE lines");
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  write("TRACE_BAD", '{"timestamp":0,"input_length":32,"output_length":2,"hash_ids":[1,2]}\n{"timestamp":1,"input_length":"x"}\n');
});
afterAll(() => mock.stop());

const expand = (s: string): string =>
  s.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === "TOK" ? LLAMA2_TOKENIZER : name === "MOCK" ? mock.url : name === "DIR" ? dir : (files[name] ?? `{${name}}`),
  );

describe("every bad input of the table: its exit and one line naming it, nothing sent", () => {
  for (const c of BAD_INPUTS) {
    test(`${c.command}: ${c.what}`, async () => {
      const before = mock.stats().generateRequests;
      const r = await runCli(c.args.map(expand), { timeoutMs: 30_000 });
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("warmbench: "));
      if (r.code !== c.exit || errors.length !== 1 || !errors[0]!.includes(expand(c.message))) console.error(r.stderr);
      expect(r.code).toBe(c.exit);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(expand(c.message));
      expect(mock.stats().generateRequests).toBe(before);
    });
  }
});

describe("the forged passports' base", () => {
  test("SOUND_PASSPORT itself is taken: each forged row is refused for its one field", async () => {
    const sound = join(dir, "sound-passport.json");
    writeFileSync(sound, JSON.stringify(SOUND_PASSPORT));
    const r = await runCli(
      ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--settle", "0", "--quiet", "--passport", sound].concat([
        "--pcts",
        "0",
        "--num-prompts",
        "2",
        "--total-tokens",
        "64",
        "--output-len",
        "2",
      ]),
      { timeoutMs: 30_000 },
    );
    expect(r.code, r.stderr).toBe(0);
  });
});
