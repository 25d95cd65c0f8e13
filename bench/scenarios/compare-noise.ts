/**
 * The noise of one run, measured: does `warmbench compare` of single runs (no --repeat) at its default limits tell a
 * real regression from noise? Three mocks run side by side: one, one whose `--itl-ms` is SHIFT_PCT higher, and one
 * whose prefill costs PREFILL_SHIFT_PCT more per uncached token. Each pair measures a BASE run against the first mock,
 * a NEW run against the same mock, and a NEW run against each shifted one, at the sizes of a default sweep's line (16
 * prompts per pct). The compiled binary judges BASE against each NEW: identical mocks at the default limits may give at
 * most MAX_FALSE REGRESSED verdicts over all pairs; the ITL-shifted mock must give REGRESSED for mean_itl_ms at the
 * tight limit, and the prefill-shifted one must fail at the default limits (the TTFT model's per-token cost), each in
 * at least 19 of 20 pairs. Verdicts are read from compare's own Markdown table (`--md`): the binary a user runs.
 *
 * The counts are what they are: nothing here is tuned to pass.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { epochMs, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";
import { parseCompareMarkdown } from "./compare-repeats.ts";

/**
 * The mock: 200 ms fixed TTFT + 20 µs per uncached token, 30 ms per decode step. With 8000-token prompts, prefill is
 * 160 ms of pct 0's TTFT and 16 ms of pct 90's: a 20 % costlier token moves mean TTFT by under its 10 % limit.
 */
const ITL_MS = 30;
const PREFILL_US = 20;
const SHIFT_PCT = 3;
const PREFILL_SHIFT_PCT = 20;
const mockArgs = (itlMs: number, prefillUs: number): string[] => [
  "--page-size",
  "16",
  "--ttft-base-ms",
  "200",
  "--prefill-us-per-token",
  String(prefillUs),
  "--itl-ms",
  String(itlMs),
];
/**
 * A default sweep's 16 prompts per pct, no repeats, over six pcts: the TTFT model needs two uncached lengths, and its
 * single-run interval the line means of three or more. All 16 in flight at once and 32 tokens each, so that a run
 * stays seconds and its ITL has ~500 samples a line.
 */
const SIZES = { num_prompts: 16, max_concurrency: 16, total_tokens: 8000, output_len: 32, pcts: "0,20,40,60,80,90" };
const RUN_ARGS = [
  "--num-prompts",
  String(SIZES.num_prompts),
  "--max-concurrency",
  String(SIZES.max_concurrency),
  "--total-tokens",
  String(SIZES.total_tokens),
  "--output-len",
  String(SIZES.output_len),
  "--pcts",
  SIZES.pcts,
  "--settle",
  "0",
  "--quiet",
];
const TIGHT = "mean_itl_ms=2%";
const PREFILL_METRIC = "ttft_model_prefill_us_per_token";
const MAX_FALSE = 1;
const REQUIRED_OF_20 = 19;

type CompareRow = Record<string, string>;

interface Judged {
  code: number;
  rows: CompareRow[];
}

interface PairResult {
  same: Judged;
  itl: Judged;
  prefill: Judged;
}

const VERDICTS = ["REGRESSED", "noisy", "inconclusive", "ok", "same", "better", "worse"] as const;

/** Verdict counts of one metric (every line of it) over the pairs, with the median Δ%. */
function countRow(label: string, metric: string, judged: readonly Judged[]): string[] {
  const rows = judged.flatMap((j) => j.rows.filter((r) => r.metric === metric));
  const count = (v: string) => rows.filter((r) => r.verdict === v).length;
  const other = rows.filter((r) => !(VERDICTS as readonly string[]).includes(r.verdict ?? "")).map((r) => r.verdict);
  const pct = (s: string | undefined) => Number.parseFloat((s ?? "").replace("%", ""));
  const deltas = rows.map((r) => pct(r["Δ%"])).filter(Number.isFinite);
  return [
    label,
    metric,
    rows[0]?.limit ?? "-",
    String(rows.length),
    ...VERDICTS.map((v) => String(count(v))),
    other.length ? `${other.length} (${[...new Set(other)].join(", ")})` : "0",
    fmt(percentile(deltas, 50), 2),
  ];
}

export async function runCompareNoise(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const pairs = ctx.quick ? 2 : 20;
  const dir = mkdtempSync(join(ctx.workDir, "compare-noise-"));
  const shiftedItlMs = ITL_MS * (1 + SHIFT_PCT / 100);
  const shiftedPrefillUs = PREFILL_US * (1 + PREFILL_SHIFT_PCT / 100);
  const loadBefore = loadavg();
  const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), mockArgs(ITL_MS, PREFILL_US));
  const itlMock = await startMock(ctx.bin, join(dir, "truth-itl.jsonl"), mockArgs(shiftedItlMs, PREFILL_US));
  const prefillMock = await startMock(ctx.bin, join(dir, "truth-prefill.jsonl"), mockArgs(ITL_MS, shiftedPrefillUs));
  let failedRuns = 0;
  const results: PairResult[] = [];
  const run = async (name: string, url: string) => {
    const out = join(dir, `${name}.jsonl`);
    const r = await runBounded([ctx.bin, "run", "--model", ctx.tokenizers.llama2, "--base-url", url, ...RUN_ARGS, "--output-file", out], {
      timeoutMs: 120_000,
    });
    if (r.code !== 0) failedRuns++;
    return out;
  };
  const compare = async (name: string, base: string, next: string, extra: string[]): Promise<Judged> => {
    const md = join(dir, `${name}.md`);
    const r = await runBounded([ctx.bin, "compare", base, next, "--md", md, ...extra], { timeoutMs: 60_000 });
    return { code: r.code ?? -1, rows: r.code === 0 || r.code === 7 || r.code === 8 ? parseCompareMarkdown(readFileSync(md, "utf8")) : [] };
  };
  const startMs = epochMs();
  try {
    for (let i = 0; i < pairs; i++) {
      const base = await run(`base${i}`, mock.url);
      const same = await run(`same${i}`, mock.url);
      const itl = await run(`itl${i}`, itlMock.url);
      const prefill = await run(`prefill${i}`, prefillMock.url);
      const result: PairResult = {
        same: await compare(`same${i}`, base, same, []),
        itl: await compare(`itl${i}`, base, itl, ["--max-regress", TIGHT]),
        prefill: await compare(`prefill${i}`, base, prefill, []),
      };
      results.push(result);
      const itlVerdicts = result.itl.rows.filter((r) => r.metric === "mean_itl_ms").map((r) => r.verdict);
      const prefillVerdict = result.prefill.rows.find((r) => r.metric === PREFILL_METRIC)?.verdict ?? "none";
      progress(
        `compare noise: pair ${i + 1}/${pairs}: identical exit ${result.same.code}; ITL +${SHIFT_PCT}% mean_itl_ms ${itlVerdicts.join("/")} (exit ${result.itl.code}); prefill +${PREFILL_SHIFT_PCT}% ${prefillVerdict} (exit ${result.prefill.code})`,
      );
    }
  } finally {
    await mock.stop();
    await itlMock.stop();
    await prefillMock.stop();
  }
  const loadAfter = loadavg();
  const elapsedS = (epochMs() - startMs) / 1000;

  const gated = [...new Set(results.flatMap((p) => p.same.rows.filter((r) => r.limit !== "-").map((r) => r.metric!)))];
  const rows = [
    ...gated.map((m) =>
      countRow(
        "identical mocks, default limits",
        m,
        results.map((p) => p.same),
      ),
    ),
    countRow(
      `NEW --itl-ms +${SHIFT_PCT}%, --max-regress ${TIGHT}`,
      "mean_itl_ms",
      results.map((p) => p.itl),
    ),
    countRow(
      `NEW --prefill-us-per-token +${PREFILL_SHIFT_PCT}%, default limits`,
      PREFILL_METRIC,
      results.map((p) => p.prefill),
    ),
    countRow(
      `NEW --prefill-us-per-token +${PREFILL_SHIFT_PCT}%, default limits`,
      "mean_ttft_ms",
      results.map((p) => p.prefill),
    ),
  ];
  const falseRegressions = results.reduce((n, p) => n + p.same.rows.filter((r) => r.verdict === "REGRESSED").length, 0);
  const identicalFailExits = results.filter((p) => p.same.code !== 0).length;
  // Caught: the candidate fails (exit 7) with mean_itl_ms REGRESSED at one of its lines or more, as a CI gate sees it.
  const itlCaught = results.filter((p) => p.itl.code === 7 && p.itl.rows.some((r) => r.metric === "mean_itl_ms" && r.verdict === "REGRESSED")).length;
  const itlRows = results.flatMap((p) => p.itl.rows.filter((r) => r.metric === "mean_itl_ms"));
  const itlRowsRegressed = itlRows.filter((r) => r.verdict === "REGRESSED").length;
  const prefillCaught = results.filter(
    (p) => p.prefill.code === 7 && p.prefill.rows.some((r) => r.metric === PREFILL_METRIC && r.verdict === "REGRESSED"),
  ).length;
  const meanTtftPastLimit = results.filter((p) => p.prefill.rows.some((r) => r.metric === "mean_ttft_ms" && r.verdict === "REGRESSED")).length;
  const decided = !ctx.quick && failedRuns === 0;
  const needed = Math.ceil((REQUIRED_OF_20 / 20) * pairs);

  const verdictOf = (j: Judged, metric: string) =>
    j.rows
      .filter((r) => r.metric === metric)
      .map((r) => `${r.pct ?? r.line ?? ""} ${r["Δ%"]} ${r.verdict}`)
      .join("; ") || "n/a";
  const pairRows = results.map((p, i) => [
    String(i + 1),
    `${p.same.code} / ${p.itl.code} / ${p.prefill.code}`,
    p.same.rows
      .filter((r) => r.limit !== "-" && !["same", "better", "ok"].includes(r.verdict ?? ""))
      .map((r) => `${r.pct ?? r.line ?? ""} ${r.metric} ${r["Δ%"]} ${r.verdict}`)
      .join(", ") || "-",
    verdictOf(p.itl, "mean_itl_ms"),
    verdictOf(p.prefill, PREFILL_METRIC),
  ]);
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  return {
    name: "compare-noise",
    title: `Compare of single runs (no --repeat): verdicts over ${pairs} pairs against identical mocks, a mock ${SHIFT_PCT} % slower per token and one ${PREFILL_SHIFT_PCT} % slower per prefill token`,
    columns: ["pairs", "metric", "limit", "rows judged", ...VERDICTS, "other", "Δ% median"],
    rows,
    targets: [
      {
        target: `at most ${MAX_FALSE} REGRESSED verdict for ${pairs} pairs of single runs against one mock (default limits, 16 prompts per pct)`,
        measured: `${falseRegressions} REGRESSED; ${identicalFailExits} of ${pairs} pairs exited non-zero${failedRuns ? `; ${failedRuns} runs failed` : ""}`,
        pass: decided ? falseRegressions <= MAX_FALSE : null,
      },
      {
        target: `NEW --itl-ms +${SHIFT_PCT} %: mean_itl_ms REGRESSED (exit 7) at ${TIGHT} in >= ${REQUIRED_OF_20} of 20 pairs (single runs)`,
        measured: `${itlCaught} of ${pairs} (REGRESSED at ${itlRowsRegressed} of ${itlRows.length} lines)`,
        pass: decided ? itlCaught >= needed : null,
      },
      {
        target: `NEW --prefill-us-per-token +${PREFILL_SHIFT_PCT} %: ${PREFILL_METRIC} REGRESSED (exit 7) at the default limits in >= ${REQUIRED_OF_20} of 20 pairs (single runs)`,
        measured: `${prefillCaught} of ${pairs} (mean_ttft_ms REGRESSED in ${meanTtftPastLimit})`,
        pass: decided ? prefillCaught >= needed : null,
      },
    ],
    notes: [
      `Mocks: ${mockArgs(ITL_MS, PREFILL_US).join(" ")}; the ITL-shifted one --itl-ms ${fmt(shiftedItlMs, 2)}, the prefill-shifted one --prefill-us-per-token ${fmt(shiftedPrefillUs, 1)}. Each run: ${RUN_ARGS.join(" ")} (llama2 tokenizer); each pair is BASE, NEW on the same mock, NEW on each shifted mock, one after another.`,
      `Verdicts are read from the compiled binary's \`compare --md\` table. Without repeats each latency's 95 % interval of Δ% is the run's own (a seeded bootstrap over each line's per-request samples; a throughput's from its mean E2E's), the TTFT model's terms' from their least-squares errors and those of its line means: a change past the limit is REGRESSED only when the whole interval lies past it too, else noisy (not a failure). The TTFT model's rows sit at the run's last line (90 %). "identical mocks, default limits" lists every metric compare gates by default; each pct line is a row.`,
      `Box: load average (1, 5, 15 min) ${load(loadBefore)} before and ${load(loadAfter)} after; ${fmt(elapsedS, 0)} s of runs.`,
    ],
    extraTables: [
      {
        title: "Compare of single runs: every pair",
        columns: [
          "pair",
          "exit: identical / ITL-shifted / prefill-shifted",
          "identical, default limits: not same/better/ok",
          `ITL-shifted, ${TIGHT}: mean_itl_ms`,
          `prefill-shifted: ${PREFILL_METRIC}`,
        ],
        rows: pairRows,
      },
    ],
    trials: [],
    figures: { pairs, falseRegressions, identicalFailExits, itlCaught, prefillCaught, meanTtftPastLimit, failedRuns },
    details: {
      sizes: { pairs, ...SIZES, itl_ms: ITL_MS, shifted_itl_ms: shiftedItlMs, prefill_us: PREFILL_US, shifted_prefill_us: shiftedPrefillUs, limit: TIGHT },
      load_average_before: loadBefore,
      load_average_after: loadAfter,
    },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
