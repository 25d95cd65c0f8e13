/**
 * `warmbench history` and `compare history:...` through the compiled binary, on runs against a mock: three runs of one
 * workload (the newest with a failed gate) and one of another; `compare history:last-green` picks the newest green
 * one of NEW's workload; the database reads back with Python's sqlite3; a corrupt, foreign or newer database exits
 * 2 and is left byte for byte; four `history add` at once all land.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { APPLICATION_ID, SCHEMA_VERSION } from "../../src/history/db.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-history-"));
const db = join(dir, "h.db");
let mock: MockServer;

async function run(name: string, extra: string[], expectCode = 0): Promise<{ file: string; runId: string }> {
  const file = join(dir, `${name}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "0,80",
    "--total-tokens",
    "600",
    "--output-len",
    "4",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
    ...extra,
  ]);
  if (r.code !== expectCode) throw new Error(`run ${name} exited ${r.code} (expected ${expectCode}): ${r.stderr}`);
  return { file, runId: readSweepLines(file)[0].run_id };
}

const PASS = ["--num-prompts", "4", "--gate", "mean_ttft_ms<=100000"];
let a: { file: string; runId: string };
let b: { file: string; runId: string };
let c: { file: string; runId: string };
let other: { file: string; runId: string };
let next: { file: string; runId: string };

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16 }));
  a = await run("a", PASS);
  // Added by the run itself.
  b = await run("b", [...PASS, "--history", "--db", db]);
  // Its gate fails (exit 6): stored, but not green.
  c = await run("c", ["--num-prompts", "4", "--gate", "mean_ttft_ms<=0.001"], 6);
  // Green, newest, but another workload (5 prompts: another fingerprint).
  other = await run("other", ["--num-prompts", "5", "--gate", "mean_ttft_ms<=100000"]);
  next = await run("new", ["--num-prompts", "4"]);
  const add = await runCli(["history", "add", a.file, "--tag", "v1", "--db", db]);
  expect(add.code).toBe(0);
  const more = await runCli(["history", "add", c.file, other.file, "--db", db]);
  expect(more.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await mock.stop();
});

/** Limits no mock run can exceed: these tests are about which BASE is read, not about its numbers. */
const WIDE = ["--only", "mean_ttft_ms", "--max-regress", "mean_ttft_ms=10000%"];

describe("history", () => {
  test("list shows every run, oldest first, with its gates and its status as a baseline, and why", async () => {
    const r = await runCli(["history", "list", "--db", db]);
    expect(r.code).toBe(0);
    const rows = r.stdout.split("\n").filter((l) => /^\S{8}\s+\d{4}-/.test(l));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual([a.runId, b.runId, c.runId, other.runId]);
    // b was stored first (by run --history): the first of its workload bootstraps; a came after, and waits for a compare.
    expect(rows[0]).toMatch(/\bv1\b.*2 pass\s+pending\s+not yet compared/);
    expect(rows[1]).toMatch(/2 pass\s+accepted\s+the first of its workload/);
    expect(rows[2]).toMatch(/2\/2 FAIL\s+rejected\s+2 gate verdict\(s\) failed$/);
    expect(rows[3]).toMatch(/accepted\s+the first of its workload/);
  });

  test("compare history:last-green picks the newest green run of NEW's workload", async () => {
    const r = await runCli(["compare", "history:last-green", next.file, "--db", db, ...WIDE]);
    expect(r.stderr).toContain(`BASE is history:last-green (run ${b.runId},`);
    expect(r.stdout).toContain(`BASE history:last-green (run ${b.runId},`);
    expect(r.code).toBe(0);
  });

  test("a run whose gate failed is never last-green; without accepted runs of the workload compare exits 2", async () => {
    const fresh = join(dir, "red-only.db");
    expect((await runCli(["history", "add", c.file, "--db", fresh])).code).toBe(0);
    const r = await runCli(["compare", "history:last-green", next.file, "--db", fresh]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no accepted run of NEW's workload");
  });

  test("history:TAG and history:RUN_ID name their run", async () => {
    const byTag = await runCli(["compare", "history:v1", next.file, "--db", db, ...WIDE]);
    expect(byTag.stdout).toContain(`(run ${a.runId},`);
    expect(byTag.code).toBe(0);
    const byId = await runCli(["compare", `history:${c.runId}`, next.file, "--db", db, ...WIDE]);
    expect(byId.stdout).toContain(`(run ${c.runId},`);
    // Named on purpose, a rejected run is still judged against, and the warning says what it is.
    expect(byId.stderr).toContain(`BASE run ${c.runId} is rejected as a baseline`);
    // c's lines carry failed gates, not failed requests: the comparison itself passes.
    expect(byId.code).toBe(0);
  });

  test("show prints one metric per line across the runs", async () => {
    const r = await runCli(["history", "show", "mean_ttft_ms", "--pct", "80", "--db", db]);
    expect(r.code).toBe(0);
    const stored = readSweepLines(a.file).find((l) => l.shared_prefix_pct === 80).mean_ttft_ms;
    const row = r.stdout.split("\n").find((l) => l.includes(a.runId))!;
    expect(row.trim().split(/\s+/).at(-1)).toBe(stored.toFixed(2));
    expect(r.stdout).not.toMatch(/\b0%/);
    const bad = await runCli(["history", "show", "no_such_ms", "--db", db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("no_such_ms is not a stored metric");
  });

  test("the database reads back with Python's sqlite3: indexed columns and the full lines", async () => {
    const script = [
      "import sqlite3, json, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "runs = c.execute('SELECT run_id, tag, green FROM runs ORDER BY started_at').fetchall()",
      "lines = c.execute('SELECT run_id, shared_prefix_pct, mean_ttft_ms, line FROM lines ORDER BY run_id, seq').fetchall()",
      "print(json.dumps({'runs': runs, 'version': c.execute('PRAGMA user_version').fetchone()[0],",
      "  'lines': [[r, p, m, json.loads(l)['run_id'], json.loads(l)['mean_ttft_ms']] for r, p, m, l in lines]}))",
    ].join("\n");
    const proc = Bun.spawnSync(["python3", "-c", script, db]);
    expect(proc.stderr.toString()).toBe("");
    const out = JSON.parse(proc.stdout.toString());
    expect(out.version).toBe(SCHEMA_VERSION);
    expect(out.runs).toEqual([
      [a.runId, "v1", 1],
      [b.runId, null, 1],
      [c.runId, null, 0],
      [other.runId, null, 1],
    ]);
    expect(out.lines).toHaveLength(8);
    const fromFile = readSweepLines(a.file);
    const stored = out.lines.filter((l: unknown[]) => l[0] === a.runId);
    expect(stored).toEqual(fromFile.map((l) => [a.runId, l.shared_prefix_pct, l.mean_ttft_ms, a.runId, l.mean_ttft_ms]));
  });

  test("a corrupt, foreign or newer database exits 2 and is left byte for byte", async () => {
    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, '{"not": "a database"}\n'.repeat(100));
    // A real history cut short: the header says SQLite, the pages are gone.
    const truncated = join(dir, "truncated.db");
    const whole = join(dir, "whole.db");
    expect((await runCli(["history", "add", a.file, "--db", whole])).code).toBe(0);
    writeFileSync(truncated, readFileSync(whole).subarray(0, 1500));
    const foreign = join(dir, "foreign.db");
    const f = new Database(foreign);
    f.run("CREATE TABLE notes (t TEXT)");
    f.close();
    const newer = join(dir, "newer.db");
    const n = new Database(newer);
    n.run(`PRAGMA application_id = ${APPLICATION_ID}`);
    n.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    n.run("CREATE TABLE runs (run_id TEXT)");
    n.close();
    const cases: [string, RegExp][] = [
      [garbage, /not SQLite at all/],
      [truncated, /not a readable warmbench history|malformed|not a database/i],
      [foreign, /another program/],
      [newer, /newer warmbench/],
    ];
    for (const [path, why] of cases) {
      const before = readFileSync(path);
      for (const args of [
        ["history", "add", a.file],
        ["history", "list"],
        ["compare", "history:last-green", next.file],
      ]) {
        const r = await runCli([...args, "--db", path]);
        expect({ path, args, code: r.code }).toEqual({ path, args, code: 2 });
        expect(r.stderr).toMatch(why);
        expect(r.stderr).toMatch(/^warmbench: error: .*--db /m);
      }
      expect(Buffer.compare(readFileSync(path), before)).toBe(0);
    }
    // run --history refuses it before anything is sent.
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:1", "--history", "--db", garbage]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not SQLite at all");
  });

  test("a history with a dropped table exits 2 naming it, not an internal error, and is left byte for byte", async () => {
    const damaged = join(dir, "dropped.db");
    expect((await runCli(["history", "add", a.file, "--db", damaged])).code).toBe(0);
    const d = new Database(damaged);
    d.run("DROP TABLE lines");
    d.run("PRAGMA wal_checkpoint(TRUNCATE)");
    d.close();
    const before = readFileSync(damaged);
    for (const args of [
      ["history", "add", c.file],
      ["history", "list"],
      ["history", "show"],
      ["compare", "history:last-green", next.file],
    ]) {
      const r = await runCli([...args, "--db", damaged]);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(`warmbench: error: --db ${damaged}: a damaged warmbench history: its table lines is missing; left untouched`);
      expect(r.stderr).not.toContain("internal error");
    }
    expect(Buffer.compare(readFileSync(damaged), before)).toBe(0);
  });

  test("a run that stopped between lines is stored rejected as partial, never a baseline", async () => {
    // The file of a run killed after its first line: that line is whole and complete, the run is not.
    const partial = join(dir, "partial.jsonl");
    writeFileSync(partial, readFileSync(a.file, "utf8").split("\n")[0] + "\n");
    const fresh = join(dir, "partial.db");
    expect((await runCli(["history", "add", partial, "--db", fresh])).code).toBe(0);
    const list = await runCli(["history", "list", "--db", fresh]);
    expect(list.stdout).toMatch(new RegExp(`${a.runId} .* rejected +partial: 1 of the 2 planned lines \\(2 pct x 1 working set x 1 rate\\)`));
    const r = await runCli(["compare", "history:last-green", next.file, "--db", fresh]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no accepted run of NEW's workload");
  });

  test("SIGINT during run --repeat 3 --history: the run is not added, and history add of its file stores it rejected", async () => {
    const slow = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 50, ttftBaseMs: 1, prefillUsPerToken: 0 }));
    try {
      const file = join(dir, "sigint-repeat.jsonl");
      const interruptedDb = join(dir, "sigint-repeat.db");
      const args = ["--model", LLAMA2_TOKENIZER, "--base-url", slow.url, "--pcts", "0", "--total-tokens", "200", "--output-len", "8"];
      const more = ["--num-prompts", "4", "--max-concurrency", "2", "--settle", "0", "--quiet", "--repeat", "3", "--history", "--db", interruptedDb];
      const proc = Bun.spawn([BINARY, ...args, ...more, "--output-file", file], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
      let stderr = "";
      const reader = (async () => {
        for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
      })();
      // Into the second repeat: the first is measured (a series reaches the file when it ends), the second is being sent.
      for (let i = 0; i < 400 && (stderr.match(/Sending \d+ requests/g) ?? []).length < 2; i++) await Bun.sleep(25);
      await Bun.sleep(100);
      proc.kill("SIGINT");
      const code = await proc.exited;
      await reader;
      expect(code).toBe(130);
      expect(stderr).toContain("--history: the run was interrupted, so it is not added");
      const lines = readFileSync(file, "utf8").trim().split("\n");
      expect(lines.length).toBeLessThan(3);
      const add = await runCli(["history", "add", file, "--db", interruptedDb]);
      expect(add.code).toBe(0);
      expect(add.stderr).toMatch(/is stored rejected, never a baseline: (0%( repeat \d)?: interrupted|partial: \d of the 3 planned lines)/);
      const list = await runCli(["history", "list", "--db", interruptedDb]);
      expect(list.stdout).toMatch(/ rejected +(\S+: interrupted|partial)/);
      expect(list.stdout).not.toContain("bootstraps");
    } finally {
      await slow.stop();
    }
  }, 60_000);

  test("four history add at once all land", async () => {
    const shared = join(dir, "concurrent.db");
    const files = [a.file, c.file, other.file, next.file];
    const procs = files.map((file) => Bun.spawn([BINARY, "history", "add", file, "--db", shared], { stdout: "pipe", stderr: "pipe" }));
    const results = await Promise.all(procs.map(async (p) => ({ code: await p.exited, stderr: await new Response(p.stderr).text() })));
    expect(results).toEqual(files.map(() => ({ code: 0, stderr: expect.stringContaining("1 run(s) added") })));
    const check = new Database(shared, { readonly: true });
    const ids = (check.query("SELECT run_id FROM runs ORDER BY run_id").all() as { run_id: string }[]).map((r) => r.run_id);
    const lines = (check.query("SELECT count(*) AS n FROM lines").get() as { n: number }).n;
    check.close();
    expect(ids).toEqual([a.runId, c.runId, other.runId, next.runId].sort());
    expect(lines).toBe(8);
  });
});

test("copying the database file is a backup that reads back", () => {
  // Closed writers checkpoint their WAL: the main file alone holds every run.
  const copy = join(dir, "copy.db");
  copyFileSync(db, copy);
  const d = new Database(copy, { readonly: true });
  expect((d.query("SELECT count(*) AS n FROM runs").get() as { n: number }).n).toBe(4);
  d.close();
});
