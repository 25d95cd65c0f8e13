/**
 * The every-flag tables of the commands that read results (`report`, `compare`, `merge`), on real results files
 * written once per test file by quick runs of the binary against mock processes: each flag (positionals included)
 * changes stdout, the files written or the exit code against the same command line without it.
 */
import { expect } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mockFor, readLines } from "../../helpers/flag-proof.ts";
import { healthyRun } from "../../helpers/healthy-run.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../../helpers/run-cli.ts";
import type { ProofBodies } from "./entries.ts";

/**
 * A and B: the same small sweep (pcts 0,50) run twice; SLOW and SLOW2: the same, twice, against a server 200 ms
 * slower to the first token; BIGGER: 80 tokens per request instead of 64 (another workload); SHORT: B without its 50%
 * line, as a run that died before it; HDB: a history database holding A (tag base) and SLOW (tag slow). A file is
 * never compared with itself: one run on both sides fails the evidence check (same_run_twice).
 */
type Input = "A" | "B" | "SLOW" | "SLOW2" | "BIGGER" | "SHORT" | "HDB" | "ACOPY";
let prepared: Promise<Record<Input, string>> | null = null;

function inputs(): Promise<Record<Input, string>> {
  prepared ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "warmbench-flag-results-"));
    // A trustworthy run each: compare rejects a NEW whose client saturated (exit 7) whatever the limits, and a run of
    // two requests on a box busy with the rest of the suite sometimes is; such a run is made again (three tries).
    const sweep = async (file: string, server: string[], more: string[] = []) => {
      const out = join(dir, file);
      const r = await healthyRun(
        [
          "run",
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          (await mockFor(server)).url,
          "--num-prompts",
          "2",
          "--total-tokens",
          "64",
          "--output-len",
          "2",
          "--pcts",
          "0,50",
          "--settle",
          "0",
          "--quiet",
          "--output-file",
          out,
          ...more,
        ],
        out,
      );
      if (r.code !== 0) throw new Error(`preparing ${file}: exit ${r.code}: ${r.stderr}`);
      return out;
    };
    // One after the other: two sweeps flushing one server's cache would disturb each other's cache checks.
    const A = await sweep("a.jsonl", []);
    const B = await sweep("b.jsonl", []);
    const SLOW = await sweep("slow.jsonl", ["--ttft-base-ms", "200"]);
    const SLOW2 = await sweep("slow2.jsonl", ["--ttft-base-ms", "200"]);
    const BIGGER = await sweep("bigger.jsonl", [], ["--total-tokens", "80"]);
    const SHORT = join(dir, "short.jsonl");
    writeFileSync(SHORT, readFileSync(B, "utf8").split("\n")[0] + "\n");
    // ACOPY: A under a new run id (a copied file), which merge refuses without --allow-copy.
    const ACOPY = join(dir, "a-copy.jsonl");
    const runId = /"run_id": "([^"]+)"/.exec(readFileSync(A, "utf8"))![1]!;
    writeFileSync(ACOPY, readFileSync(A, "utf8").replaceAll(`"${runId}"`, '"copyofaa"'));
    const HDB = join(dir, "history.db");
    for (const [file, tag] of [
      [A, "base"],
      [SLOW, "slow"],
    ] as const) {
      const r = await runCli(["history", "add", file, "--tag", tag, "--db", HDB]);
      if (r.code !== 0) throw new Error(`preparing ${HDB}: exit ${r.code}: ${r.stderr}`);
    }
    return { A, B, SLOW, SLOW2, BIGGER, SHORT, HDB, ACOPY };
  })();
  return prepared;
}

interface Ran extends CliResult {
  dir: string;
}

/** Runs `args` with {A}... replaced by the inputs' paths and {dir} by a fresh dir. */
async function ran(args: string[]): Promise<Ran> {
  const files = await inputs();
  const dir = mkdtempSync(join(tmpdir(), "warmbench-flag-"));
  const r = await runCli(args.map((a) => a.replace(/\{(\w+)\}/g, (_, name: string) => (name === "dir" ? dir : files[name as Input]))));
  return { ...r, dir };
}

interface ResultsEntry {
  /** The command line with the flag. */
  args: string[];
  /** The same without it. */
  vs: string[];
  proof: (o: Ran, base: Ran) => void;
}

const bodies = (table: Record<string, ResultsEntry>): ProofBodies =>
  Object.fromEntries(
    Object.entries(table).map(([flag, e]) => [
      flag,
      async () => {
        const [o, b] = await Promise.all([ran(e.args), ran(e.vs)]);
        e.proof(o, b);
      },
    ]),
  );

const codes = (o: Ran, b: Ran, flagged: number, base: number) => expect([o.code, b.code]).toEqual([flagged, base]);
const written = (o: Ran, b: Ran, file: string) => {
  expect(o.code).toBe(0);
  expect(existsSync(join(o.dir, file))).toBe(true);
  expect(existsSync(join(b.dir, file))).toBe(false);
};
/** Both lines fail on a file that is not there; only --verbose shows where. */
const verbose = (command: string[]): ResultsEntry => ({
  args: [...command, "--verbose"],
  vs: command,
  proof: (o, b) => {
    expect([o.code, b.code]).toEqual([2, 2]);
    expect(o.stderr).toMatch(/^\s+at /m);
    expect(b.stderr).not.toMatch(/^\s+at /m);
  },
});
const MISSING = "{dir}/missing.jsonl";

const REPORT: Record<string, ResultsEntry> = {
  // A prints its 50% line; SHORT has none.
  files: {
    args: ["report", "{A}"],
    vs: ["report", "{SHORT}"],
    proof: (o, b) => {
      codes(o, b, 0, 0);
      expect(o.stdout.split("\n").length).toBeGreaterThan(b.stdout.split("\n").length);
    },
  },
  html: {
    args: ["report", "{A}", "--html", "{dir}/r.html"],
    vs: ["report", "{A}"],
    proof: (o, b) => {
      written(o, b, "r.html");
      expect(readFileSync(join(o.dir, "r.html"), "utf8")).toMatch(/^<!doctype html>/i);
    },
  },
  md: {
    args: ["report", "{A}", "--md", "{dir}/r.md"],
    vs: ["report", "{A}"],
    proof: (o, b) => {
      written(o, b, "r.md");
      expect(readFileSync(join(o.dir, "r.md"), "utf8")).toContain("|");
    },
  },
  // The trend charts of HDB's runs (A's tagged base, SLOW's tagged slow) come before the file's own charts.
  history: {
    args: ["report", "{A}", "--html", "{dir}/r.html", "--history", "--db", "{HDB}"],
    vs: ["report", "{A}", "--html", "{dir}/r.html"],
    proof: async (o, b) => {
      codes(o, b, 0, 0);
      const page = (r: Ran) => readFileSync(join(r.dir, "r.html"), "utf8");
      expect(page(o)).toContain('id="chart-history-p99_ttft_ms"');
      expect(page(o)).toContain(runIdOf((await inputs()).SLOW));
      expect(page(b)).not.toContain("history-p99_ttft_ms");
    },
  },
  // HDB has runs to draw; the default ./warmbench.db holds no history (exit 2).
  db: {
    args: ["report", "--md", "-", "--history", "--db", "{HDB}"],
    vs: ["report", "--md", "-", "--history"],
    proof: (o, b) => {
      codes(o, b, 0, 2);
      expect(o.stdout).toContain("### History: mean_ttft_ms");
      expect(b.stderr).toContain("warmbench.db");
    },
  },
  // Only the run tagged slow is a point of the trend.
  tag: {
    args: ["report", "--md", "-", "--history", "--db", "{HDB}", "--tag", "slow"],
    vs: ["report", "--md", "-", "--history", "--db", "{HDB}"],
    proof: async (o, b) => {
      codes(o, b, 0, 0);
      const { A, SLOW } = await inputs();
      expect(b.stdout).toContain(runIdOf(A));
      expect(o.stdout).not.toContain(runIdOf(A));
      expect(o.stdout).toContain(runIdOf(SLOW));
    },
  },
  verbose: verbose(["report", MISSING]),
};

/** Only the time to first token, with room for a busy box's noise but not for the slow server's 200 ms. */
// SLOW is 200 ms slower to the first token (+3000 %); two runs of one mock under the suite's load differ by well under 500 %.
const TTFT_ONLY = ["--only", "mean_ttft_ms", "--max-regress", "mean_ttft_ms=500%"];

const COMPARE: Record<string, ResultsEntry> = {
  // Against another slow run SLOW shows no regression; against A's baseline its time to first token has regressed.
  base: { args: ["compare", "{A}", "{SLOW}", ...TTFT_ONLY], vs: ["compare", "{SLOW2}", "{SLOW}", ...TTFT_ONLY], proof: (o, b) => codes(o, b, 7, 0) },
  new: { args: ["compare", "{A}", "{SLOW}", ...TTFT_ONLY], vs: ["compare", "{A}", "{B}", ...TTFT_ONLY], proof: (o, b) => codes(o, b, 7, 0) },
  md: {
    args: ["compare", "{A}", "{B}", ...TTFT_ONLY, "--md", "{dir}/c.md"],
    vs: ["compare", "{A}", "{B}", ...TTFT_ONLY],
    proof: (o, b) => written(o, b, "c.md"),
  },
  // Judged on mean ITL alone, SLOW (slower to the first token, not per token) passes; with the same ITL limit and the
  // other metrics at their defaults it regressed. The ITL limit is wide: a mock's ITL of a few ms doubles on a busy box.
  only: {
    args: ["compare", "{A}", "{SLOW}", "--only", "mean_itl_ms", "--max-regress", "mean_itl_ms=100000%"],
    vs: ["compare", "{A}", "{SLOW}", "--max-regress", "mean_itl_ms=100000%"],
    proof: (o, b) => codes(o, b, 0, 7),
  },
  "max-regress": {
    args: [
      "compare",
      "{A}",
      "{SLOW}",
      "--max-regress",
      "mean_ttft_ms=100000%,p99_ttft_ms=100000%,mean_itl_ms=100000%,mean_tpot_ms=100000%,ttft_model_fixed_ms=100000%,ttft_model_prefill_us_per_token=100000%,output_throughput=100000%",
    ],
    vs: ["compare", "{A}", "{SLOW}"],
    proof: (o, b) => codes(o, b, 0, 7),
  },
  // Another workload is refused (exit 2) unless forced; forced, the lines are compared and the difference said.
  force: {
    args: ["compare", "{A}", "{BIGGER}", "--force"],
    vs: ["compare", "{A}", "{BIGGER}"],
    proof: (o, b) => {
      expect(b.code).toBe(2);
      expect([0, 7]).toContain(o.code);
      expect(o.stderr).toMatch(/total_tokens/);
    },
  },
  "allow-missing": {
    args: ["compare", "{A}", "{SHORT}", ...TTFT_ONLY, "--allow-missing"],
    vs: ["compare", "{A}", "{SHORT}", ...TTFT_ONLY],
    proof: (o, b) => codes(o, b, 0, 7),
  },
  // history:base is A in HDB, so SLOW regresses against it; the default ./warmbench.db holds no history (exit 2).
  db: {
    args: ["compare", "history:base", "{SLOW}", "--db", "{HDB}"],
    vs: ["compare", "history:base", "{SLOW}"],
    proof: (o, b) => {
      codes(o, b, 7, 2);
      expect(b.stderr).toContain("warmbench.db");
    },
  },
  verbose: verbose(["compare", MISSING, "{A}"]),
};

const MERGE: Record<string, ResultsEntry> = {
  // The merged means are those of the files given: SLOW's 200 ms to the first token shows.
  files: {
    args: ["merge", "{A}", "{SLOW}", "-o", "{dir}/m.jsonl"],
    vs: ["merge", "{A}", "{B}", "-o", "{dir}/m.jsonl"],
    proof: (o, b) => {
      codes(o, b, 0, 0);
      const ttft = (r: Ran) => readLines(join(r.dir, "m.jsonl"))[0]!.mean_ttft_ms;
      expect(ttft(o)).toBeGreaterThan(ttft(b) + 50);
    },
  },
  "output-file": {
    args: ["merge", "{A}", "{B}", "--output-file", "{dir}/m.jsonl"],
    vs: ["merge", "{A}", "{B}"],
    proof: (o, b) => {
      codes(o, b, 0, 2);
      expect(readLines(join(o.dir, "m.jsonl")).length).toBe(2);
    },
  },
  "allow-copy": {
    args: ["merge", "{A}", "{ACOPY}", "-o", "{dir}/m.jsonl", "--allow-copy"],
    vs: ["merge", "{A}", "{ACOPY}", "-o", "{dir}/m.jsonl"],
    proof: (o, b) => {
      codes(o, b, 0, 2);
      expect(b.stderr).toContain("a copy under a new run id would count its requests twice");
    },
  },
  verbose: verbose(["merge", MISSING, "{A}", "-o", "{dir}/m.jsonl"]),
};

/** The run ids of a results file, as `history list` prints them. */
const runIdOf = (file: string): string => readLines(file)[0]!.run_id;

const HISTORY: Record<string, ResultsEntry> = {
  // add writes the runs into the database; list on the same (absent) database has nothing to read.
  action: {
    args: ["history", "add", "{A}", "--db", "{dir}/h.db"],
    vs: ["history", "list", "--db", "{dir}/h.db"],
    proof: (o, b) => {
      codes(o, b, 0, 2);
      expect(existsSync(join(o.dir, "h.db"))).toBe(true);
    },
  },
  // HDB lists A's run; the default ./warmbench.db holds no history.
  db: {
    args: ["history", "list", "--db", "{HDB}"],
    vs: ["history", "list"],
    proof: async (o, b) => {
      codes(o, b, 0, 2);
      expect(o.stdout).toContain(runIdOf((await inputs()).A));
    },
  },
  // Only the run tagged slow is listed.
  tag: {
    args: ["history", "list", "--db", "{HDB}", "--tag", "slow"],
    vs: ["history", "list", "--db", "{HDB}"],
    proof: async (o, b) => {
      codes(o, b, 0, 0);
      const { A, SLOW } = await inputs();
      expect(b.stdout).toContain(runIdOf(A));
      expect(o.stdout).not.toContain(runIdOf(A));
      expect(o.stdout).toContain(runIdOf(SLOW));
    },
  },
  // The trend table has a column per line: only the 50% one with --pct 50.
  pct: {
    args: ["history", "show", "mean_ttft_ms", "--db", "{HDB}", "--pct", "50"],
    vs: ["history", "show", "mean_ttft_ms", "--db", "{HDB}"],
    proof: (o, b) => {
      codes(o, b, 0, 0);
      const header = (r: Ran) => r.stdout.split("\n").find((l) => l.startsWith("started_at")) ?? "";
      expect(header(b)).toMatch(/\s0%\s+50%/);
      expect(header(o)).toMatch(/\s50%/);
      expect(header(o)).not.toMatch(/\s0%/);
    },
  },
  verbose: verbose(["history", "add", MISSING, "--db", "{dir}/h.db"]),
};

export const RESULTS_PROOFS: Record<"report" | "compare" | "merge" | "history", ProofBodies> = {
  report: bodies(REPORT),
  compare: bodies(COMPARE),
  merge: bodies(MERGE),
  history: bodies(HISTORY),
};
