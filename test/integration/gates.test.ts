/**
 * Gates through the compiled binary against the mock: a gate that cannot hold exits 6 and names itself, gates that
 * hold exit 0, every pct line carries its verdicts, the console shows them (and `report` shows them again from the
 * file alone), and a gate on an unknown metric is a usage error before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-gates-"));
let mock: MockServer;
const workload = (url: string) => [
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  url,
  "--pcts",
  "0,50,90",
  "--num-prompts",
  "6",
  "--total-tokens",
  "1000",
  "--output-len",
  "6",
  "--max-concurrency",
  "3",
  "--settle",
  "0",
];

let failing: CliResult;
let passing: CliResult;

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, ttftBaseMs: 3, prefillUsPerToken: 5 }));
  const gatesFile = join(dir, "gates.txt");
  writeFileSync(gatesFile, "# release budget\nfailed==0\n\ncached_tokens_mismatched == 0   # the cache held\n");
  // TTFT is never negative: this gate cannot hold at 50 %; the other two always hold.
  failing = await runCli([...workload(mock.url), "--output-file", join(dir, "failing.jsonl"), "--gate", "mean_ttft_ms<0@pct=50", "--gate", "completed>=6"]);
  passing = await runCli(
    [...workload(mock.url), "--output-file", join(dir, "passing.jsonl"), "--gates-file", gatesFile, "--gate", "p99_itl_ms<10000@pct>=50"],
    {
      env: { GITHUB_STEP_SUMMARY: join(dir, "summary.md") },
    },
  );
});

afterAll(async () => {
  await mock.stop();
});

describe("gates", () => {
  test("a gate that cannot hold exits 6 and prints the failing gate", () => {
    if (failing.code !== 6) console.error(failing.stderr);
    expect(failing.code).toBe(6);
    expect(failing.stderr).toContain("gate failed at 50%: mean_ttft_ms<0@pct=50");
    expect(failing.stderr).toMatch(/1 gate verdict\(s\) failed, first mean_ttft_ms<0@pct=50 at 50% .*exit code 6/);
    // The per-pct block and the gate table after the sweep both show it failing.
    expect(failing.stdout).toMatch(/^mean_ttft_ms<0@pct=50 +\d+\.\d\d +FAIL$/m);
    expect(failing.stdout).toMatch(/^mean_ttft_ms<0@pct=50 +50% +\d+\.\d\d +FAIL$/m);
    expect(failing.stdout).toMatch(/^50% .* FAIL 1\/2$/m);
  });

  test("each pct line carries the verdicts of the gates whose scope holds it", () => {
    const lines = readSweepLines(join(dir, "failing.jsonl"));
    expect(lines.map((l) => l.gates.map((g: { expr: string }) => g.expr))).toEqual([
      ["completed>=6"],
      ["mean_ttft_ms<0@pct=50", "completed>=6"],
      ["completed>=6"],
    ]);
    const atHalf = lines[1].gates[0];
    expect(atHalf).toEqual({ expr: "mean_ttft_ms<0@pct=50", value: lines[1].mean_ttft_ms, pass: false });
    expect(lines[1].gates[1]).toEqual({ expr: "completed>=6", value: 6, pass: true });
    expect(lines[0].run.options.gates).toEqual(["mean_ttft_ms<0@pct=50", "completed>=6"]);
  });

  test("gates that hold exit 0; --gates-file skips comments and blank lines", () => {
    if (passing.code !== 0) console.error(passing.stderr);
    expect(passing.code).toBe(0);
    const lines = readSweepLines(join(dir, "passing.jsonl"));
    expect(lines[0].gates).toEqual([
      { expr: "failed==0", value: 0, pass: true },
      { expr: "cached_tokens_mismatched==0", value: 0, pass: true },
    ]);
    expect(lines[2].gates.map((g: { expr: string }) => g.expr)).toEqual(["p99_itl_ms<10000@pct>=50", "failed==0", "cached_tokens_mismatched==0"]);
    expect(passing.stdout).toMatch(/^90% .* 3\/3 pass$/m);
  });

  test("with GITHUB_STEP_SUMMARY set, the run appends its Markdown report there", () => {
    const md = readFileSync(join(dir, "summary.md"), "utf8");
    expect(md).toStartWith("## warmbench run: ");
    expect(md).toContain("All 8 gate verdicts pass.");
    expect(md).toContain("| passing.jsonl | 90% | p99\\_itl\\_ms\\<10000@pct\\>=50 |");
    expect(md).toContain("### Mean TTFT");
  });

  test("report rebuilds the console, gates and end-of-sweep table included, byte for byte", async () => {
    for (const [name, run] of [
      ["failing", failing],
      ["passing", passing],
    ] as const) {
      const r = await runCli(["report", join(dir, `${name}.jsonl`)]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(run.stdout);
    }
    expect(passing.stdout).toContain("Sweep summary");
  });

  test("a gate naming no numeric key is a usage error naming the gate, before anything is sent", async () => {
    // Nothing listens on port 9: the error must come first.
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--gate", "p99_ttft<=800"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'warmbench: error: --gate "p99_ttft<=800": p99_ttft is not a numeric key of a pct or round line (e.g. p99_ttft_ms, mean_itl_ms, output_throughput, failed, cached_tokens_mismatched)',
    );
    const backend = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--gate", "backend==1"]);
    expect(backend.code).toBe(2);
    expect(backend.stderr).toContain('--gate "backend==1": backend is not a numeric key');
    const file = join(dir, "bad-gates.txt");
    writeFileSync(file, "failed==0\nmean_itl_ms<<3\n");
    const fromFile = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--gates-file", file]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(`--gates-file ${file} line 2 "mean_itl_ms<<3": expected METRIC OP VALUE`);
  });

  test("a gate scoped to a pct the run does not sweep exits 2 before any request reaches the server", async () => {
    const idle = await startMockServer(mockOptions({ port: 0, pageSize: 16 }));
    try {
      const r = await runCli([...workload(idle.url).map((a) => (a === "0,50,90" ? "0,50" : a)), "--gate", "p99_ttft_ms<=0.001@pct=90"]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe('warmbench: error: --gate "p99_ttft_ms<=0.001@pct=90": its scope matches no line of this run, which will have pct 0, 50');
      // The other axes, and a gate from a file, are checked the same way.
      const ws = await runCli([...workload(idle.url), "--gate", "failed==0@working_set=4"]);
      expect(ws.code).toBe(2);
      expect(ws.stderr).toContain('--gate "failed==0@working_set=4": its scope matches no line of this run, which will have pct 0, 50, 90 x working set 1');
      const file = join(dir, "round-gates.txt");
      writeFileSync(file, "failed==0\nfailed==0@round>=1\n");
      const round = await runCli([...workload(idle.url), "--gates-file", file]);
      expect(round.code).toBe(2);
      expect(round.stderr).toContain(`--gates-file ${file} line 2 "failed==0@round>=1": its scope matches no line of this run`);
      const roundKey = await runCli([...workload(idle.url), "--gate", "approximate_turns==0"]);
      expect(roundKey.code).toBe(2);
      expect(roundKey.stderr).toContain('--gate "approximate_turns==0": approximate_turns is not a numeric key of a pct line, so it would judge nothing');
      // Nothing reached the server: no request, no flush.
      const stats = idle.stats();
      expect([stats.generateRequests, stats.completionsRequests, stats.flushes]).toEqual([0, 0, 0]);
    } finally {
      await idle.stop();
    }
  });

  test("gates scoped by request rate judge only the lines at that rate, and a failure names the line by its axes", async () => {
    const out = join(dir, "rates.jsonl");
    const r = await runCli([
      // Nothing in flight capped at 200 req/s: the client sends on schedule, so the line's load is carried and its gate
      // judges its value (at --max-concurrency 3 the sends fall behind, and the evidence check fails the gate).
      ...workload(mock.url).map((a) => (a === "0,50,90" ? "50" : a === "3" ? "0" : a)),
      "--request-rate",
      "200,inf",
      "--output-file",
      out,
      "--gate",
      "completed>=6@request_rate=200",
      "--gate",
      "mean_ttft_ms<0@request_rate=inf",
    ]);
    expect(r.code).toBe(6);
    const lines = readSweepLines(out);
    // readSweepLines keeps the file's Infinity as the string the script writes.
    expect(lines.map((l) => [String(l.request_rate), l.gates.map((g: { expr: string }) => g.expr)])).toEqual([
      ["200", ["completed>=6@request_rate=200"]],
      ["Infinity", ["mean_ttft_ms<0@request_rate=inf"]],
    ]);
    expect(lines[0].gates[0].pass).toBe(true);
    expect(r.stderr).toMatch(/1 gate verdict\(s\) failed, first mean_ttft_ms<0@request_rate=inf at 50% \(value \d+\.\d\d\): exit code 6/);
  });
});
