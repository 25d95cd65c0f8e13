/**
 * One version: package.json's (0.4.0) is what `warmbench --version` prints and what every line a run writes says
 * (src/version.ts compiles it in). And the files of earlier versions still read: 0.1's (run/pct/summary lines),
 * 0.2's (real lines of the 0.2 binary, which said "0.1.0"; test/fixtures/results/v0.2-*.jsonl) and the script's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { parseJsonlLine } from "../../src/report/jsonl.ts";
import { LLAMA2_TOKENIZER, ROOT, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-versions-"));
const FIX = join(ROOT, "test", "fixtures", "results");
const V01 = join(FIX, "v0.1-sweep.jsonl");
const V02 = join(FIX, "v0.2-sweep.jsonl");
const V02B = join(FIX, "v0.2-sweep-b.jsonl");
const V02_MULTITURN = join(FIX, "v0.2-multiturn.jsonl");
const SCRIPT = join(ROOT, "test", "fixtures", "metrics", "script_results.jsonl");
const jsonl = (file: string): any[] => readFileSync(file, "utf8").trim().split("\n").map(parseJsonlLine);

describe("one version everywhere", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, prefillUsPerToken: 5, ttftBaseMs: 1 }));
  });
  afterAll(() => mock.stop());

  test("package.json says 0.4.0 and --version prints it", async () => {
    expect(pkg.version).toBe("0.4.0");
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test("every line of a sweep and of a multiturn run says that version", async () => {
    const sweep = join(dir, "sweep.jsonl");
    const rounds = join(dir, "rounds.jsonl");
    const common = ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--settle", "0", "--output-len", "4"];
    const a = await runCli([...common, "--pcts", "0,50", "--num-prompts", "4", "--total-tokens", "200", "--output-file", sweep]);
    const b = await runCli([
      "multiturn",
      ...common,
      "--num-clients",
      "2",
      "--num-rounds",
      "2",
      "--shared-system-tokens",
      "32",
      "--turn-tokens",
      "16",
      "--output-file",
      rounds,
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const lines = [...jsonl(sweep), ...jsonl(rounds)];
    expect(lines.length).toBe(2 + 2);
    for (const line of lines) expect(line.warmbench_version ?? line.run?.warmbench_version).toBe(pkg.version);
  });
});

describe("files of 0.1, 0.2 and the script still read", () => {
  test("the fixtures are what they claim: 0.2's lines are real lines of the 0.2 binary", () => {
    expect(jsonl(V01).map((l) => l.type)).toContain("summary");
    for (const file of [V02, V02B])
      for (const l of jsonl(file)) expect([l.warmbench_version, typeof l.hdr, typeof l.workload]).toEqual(["0.1.0", "object", "object"]);
    expect(jsonl(V02_MULTITURN).map((l) => l.type)).toEqual(["round", "round", "round"]);
  });

  test("report renders each", async () => {
    for (const [file, marker] of [
      [V01, "shared_prefix=90%"],
      [V02, "shared_prefix=50%"],
      [V02_MULTITURN, "multi-turn: 2 clients"],
      [SCRIPT, "shared_prefix=90%"],
    ] as const) {
      const r = await runCli(["report", file]);
      expect([file, r.code]).toEqual([file, 0]);
      expect(r.stdout).toContain(marker);
    }
  });

  test("compare reads each (0.1's and the script's, without fingerprints, with --force)", async () => {
    // One file on both sides is one run judged against itself: the evidence check's same_run_twice.
    const self = await runCli(["compare", V02, V02]);
    expect(self.code).toBe(7);
    expect(self.stderr).toContain("same_run_twice: run");
    const v02 = await runCli(["compare", V02, V02B, "--force", "--only", "mean_ttft_ms", "--max-regress", "mean_ttft_ms=100000%"]);
    expect(v02.code).toBe(0);
    expect(v02.stdout).toContain("No regression beyond the limits (2 lines compared)");
    // Read as 0.2's lines, judged on what they hold, and said so.
    expect(v02.stderr).toContain(
      `compare: NEW ${V02B}: 2 of 2 line(s) written by warmbench 0.1.0, without an evidence block: judged only on the keys they hold`,
    );
    for (const [file, lines] of [
      [V01, 3],
      [SCRIPT, 2],
    ] as const) {
      const refused = await runCli(["compare", file, file]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("workload fingerprint");
      const forced = await runCli(["compare", "--force", file, file]);
      expect([file, forced.code]).toEqual([file, 0]);
      expect(forced.stdout).toContain(`No regression beyond the limits (${lines} lines compared)`);
    }
  });

  test("merge reads 0.2's files, and refuses 0.1's and the script's in one line naming why", async () => {
    const out = join(dir, "merged.jsonl");
    const r = await runCli(["merge", V02, V02B, "-o", out]);
    expect(r.code).toBe(0);
    const [a, b, m] = [jsonl(V02), jsonl(V02B), readSweepLines(out)];
    expect(m.map((l) => l.completed)).toEqual(a.map((l, k) => l.completed + b[k].completed));
    const old = await runCli(["merge", V01, V01, "-o", join(dir, "old.jsonl")]);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain("merge: every line needs its workload fingerprint (files written by warmbench 0.2 or later)");
    const script = await runCli(["merge", SCRIPT, SCRIPT, "-o", join(dir, "script.jsonl")]);
    expect(script.code).toBe(2);
    expect(script.stderr).toContain("has lines without HDR histograms (not written by warmbench)");
  });
});
