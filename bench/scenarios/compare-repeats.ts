/**
 * Noise-aware compare, measured: does `warmbench compare` on runs with `--repeat 3` tell a real regression from noise?
 * Two mocks run side by side, identical but for NEW's `--itl-ms`, SHIFT_PCT higher on the second. Each of the pairs
 * measures one BASE run against the first mock, then a NEW run against the same mock, then a NEW run against the
 * shifted one, every run with --repeat 3. The compiled binary judges BASE against each NEW: identical mocks with the
 * default limits (and with the tight ITL limit) must give no REGRESSED verdict; the shifted mock must give REGRESSED
 * for mean_itl_ms at the tight limit in at least 19 of 20 pairs. The verdicts are read from compare's own Markdown
 * table (`--md`), so this measures the binary a user runs, not a copy of its logic.
 *
 * The counts are what they are: nothing here is tuned to pass. When the shift is missed, the repeats' spread says
 * why: from each pair's own spread over its repeats, the scenario projects how many repeats a side would put the
 * whole 95 % interval past the limit in 19 of 20 pairs.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { mean, meanInterval, sampleVariance, studentTQuantile } from "../../src/metrics/intervals.ts";
import { readResults } from "../../src/report/results-file.ts";
import { epochMs, readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

/** The mock: a GPU serving 2k-token prompts (TTFT 100 ms + 50 µs per uncached token) at 30 ms per decode step. */
const ITL_MS = 30;
const SHIFT_PCT = 3;
const mockArgs = (itlMs: number): string[] => ["--page-size", "16", "--ttft-base-ms", "100", "--prefill-us-per-token", "50", "--itl-ms", String(itlMs)];
const REPEAT = 3;
/** Tiny runs, so that 3 runs a pair x 20 pairs fit in minutes on a shared 2-core box. */
const SIZES = { num_prompts: 4, max_concurrency: 4, total_tokens: 2000, output_len: 16, pcts: "90", repeat: REPEAT };
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
  "--repeat",
  String(REPEAT),
];
const TIGHT = "mean_itl_ms=2%";
const TIGHT_LIMIT_PCT = 2;
const REQUIRED_OF_20 = 19;

/** One row of compare's Markdown table, by its header names (unescaped). */
type CompareRow = Record<string, string>;

/** Splits a Markdown table line into cells, keeping escaped pipes, and undoes escapeMarkdownCell. */
function cellsOf(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replace(/\\(.)/g, "$1"));
}

/** The rows of the delta table of `warmbench compare --md`; throws when there is none (a changed format). */
export function parseCompareMarkdown(md: string): CompareRow[] {
  const lines = md.split("\n");
  const head = lines.findIndex((l) => /^\| (pct|line) \| metric \|/.test(l));
  if (head < 0) throw new Error("compare --md: no delta table found");
  const columns = cellsOf(lines[head]!);
  const rows: CompareRow[] = [];
  for (const l of lines.slice(head + 2)) {
    if (!l.startsWith("|")) break;
    const cells = cellsOf(l);
    rows.push(Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? ""])));
  }
  return rows;
}

interface Judged {
  code: number;
  rows: CompareRow[];
}

interface PairResult {
  same: Judged;
  sameTight: Judged;
  shifted: Judged;
  saturated: boolean[];
  /** mean_itl_ms of each repeat of BASE, same NEW and shifted NEW. */
  itl: number[][];
}

const VERDICTS = ["REGRESSED", "inconclusive", "same", "better"] as const;

/** Verdict counts of one metric over the pairs, with the median Δ% and 95 % interval width. */
function countRow(label: string, metric: string, judged: readonly Judged[]): string[] {
  const rows = judged.map((j) => j.rows.find((r) => r.metric === metric)).filter((r): r is CompareRow => r !== undefined);
  const count = (v: string) => rows.filter((r) => r.verdict === v).length;
  const other = rows.filter((r) => !(VERDICTS as readonly string[]).includes(r.verdict ?? "")).map((r) => r.verdict);
  const pct = (s: string | undefined) => Number.parseFloat((s ?? "").replace("%", ""));
  const deltas = rows.map((r) => pct(r["Δ%"])).filter(Number.isFinite);
  const widths = rows
    .map((r) => (r["95% CI"] ?? "").split("..").map(pct))
    .filter((w) => w.length === 2 && w.every(Number.isFinite))
    .map(([lo, hi]) => hi! - lo!);
  return [
    label,
    metric,
    rows[0]?.limit ?? "-",
    String(rows.length),
    ...VERDICTS.map((v) => String(count(v))),
    other.length ? `${other.length} (${[...new Set(other)].join(", ")})` : "0",
    fmt(percentile(deltas, 50), 2),
    fmt(percentile(widths, 50), 2),
    fmt(Math.max(...widths), 2),
  ];
}

/** One pair's repeat values of mean_itl_ms, BASE and NEW. */
export interface RepeatValues {
  base: readonly number[];
  next: readonly number[];
}

/**
 * How many pairs the verdict would catch with `n` repeats a side, were each side's spread what its measured repeats
 * show and the difference the shift measured over all pairs (`shiftPct`; one pair's own Δ at 3 repeats is as noisy as
 * its interval is wide, and more repeats are what would settle it): the shift minus the pair's 95 % Welch half-width
 * at n (in percent of BASE's mean) past the limit.
 */
export function projectedCaught(pairs: readonly RepeatValues[], n: number, shiftPct: number, limitPct: number): number {
  return pairs.filter(({ base, next }) => {
    const [vb, vn] = [sampleVariance(base), sampleVariance(next)];
    if (vb + vn === 0) return shiftPct > limitPct;
    const df = ((n - 1) * (vb + vn) ** 2) / (vb ** 2 + vn ** 2);
    return shiftPct - (studentTQuantile(0.975, df) * Math.sqrt((vb + vn) / n) * 100) / mean(base) > limitPct;
  }).length;
}

/** The fewest repeats a side (2..50) at which `needed` of the pairs would be caught; null when 50 do not. */
export function repeatsFor(pairs: readonly RepeatValues[], needed: number, shiftPct: number, limitPct: number): number | null {
  for (let n = 2; n <= 50; n++) if (projectedCaught(pairs, n, shiftPct, limitPct) >= needed) return n;
  return null;
}

export async function runCompareRepeats(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const pairs = ctx.quick ? 3 : 20;
  const dir = mkdtempSync(join(ctx.workDir, "compare-repeats-"));
  const shiftedItlMs = ITL_MS * (1 + SHIFT_PCT / 100);
  const loadBefore = loadavg();
  const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), mockArgs(ITL_MS));
  const shiftedMock = await startMock(ctx.bin, join(dir, "truth-shifted.jsonl"), mockArgs(shiftedItlMs));
  let failedRuns = 0;
  const results: PairResult[] = [];
  const run = async (name: string, url: string) => {
    const out = join(dir, `${name}.jsonl`);
    const r = await runBounded([ctx.bin, "run", "--model", ctx.tokenizers.llama2, "--base-url", url, ...RUN_ARGS, "--output-file", out], {
      timeoutMs: 120_000,
    });
    if (r.code !== 0) failedRuns++;
    const lines = readResults(readIfExists(out), out).at(-1)?.pcts ?? [];
    return {
      out,
      saturated: lines.some((l) => l.client_saturated !== false),
      itl: lines.map((l) => l.mean_itl_ms).filter((v): v is number => typeof v === "number"),
    };
  };
  const compare = async (name: string, base: string, next: string, extra: string[]): Promise<Judged> => {
    const md = join(dir, `${name}.md`);
    const r = await runBounded([ctx.bin, "compare", base, next, "--md", md, ...extra], { timeoutMs: 60_000 });
    return { code: r.code ?? -1, rows: r.code === 0 || r.code === 7 ? parseCompareMarkdown(readFileSync(md, "utf8")) : [] };
  };
  const startMs = epochMs();
  try {
    for (let i = 0; i < pairs; i++) {
      const base = await run(`base${i}`, mock.url);
      const same = await run(`same${i}`, mock.url);
      const shifted = await run(`shifted${i}`, shiftedMock.url);
      const result: PairResult = {
        same: await compare(`same${i}`, base.out, same.out, []),
        sameTight: await compare(`same-tight${i}`, base.out, same.out, ["--max-regress", TIGHT]),
        shifted: await compare(`shifted${i}`, base.out, shifted.out, ["--max-regress", TIGHT]),
        saturated: [base.saturated, same.saturated, shifted.saturated],
        itl: [base.itl, same.itl, shifted.itl],
      };
      results.push(result);
      const itlVerdict = result.shifted.rows.find((r) => r.metric === "mean_itl_ms")?.verdict ?? "none";
      progress(`compare repeats: pair ${i + 1}/${pairs}: identical exit ${result.same.code}, shifted mean_itl_ms ${itlVerdict} (exit ${result.shifted.code})`);
    }
  } finally {
    await mock.stop();
    await shiftedMock.stop();
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
      `identical mocks, --max-regress ${TIGHT}`,
      "mean_itl_ms",
      results.map((p) => p.sameTight),
    ),
    countRow(
      `NEW --itl-ms +${SHIFT_PCT}%, --max-regress ${TIGHT}`,
      "mean_itl_ms",
      results.map((p) => p.shifted),
    ),
  ];
  const verdictOf = (j: Judged, metric: string) => j.rows.find((r) => r.metric === metric)?.verdict;
  const falseRegressions = results.reduce(
    (n, p) => n + p.same.rows.filter((r) => r.verdict === "REGRESSED").length + (verdictOf(p.sameTight, "mean_itl_ms") === "REGRESSED" ? 1 : 0),
    0,
  );
  const identicalFailExits = results.filter((p) => p.same.code !== 0 || p.sameTight.code !== 0).length;
  const caught = results.filter((p) => verdictOf(p.shifted, "mean_itl_ms") === "REGRESSED").length;
  const saturatedRuns = results.reduce((n, p) => n + p.saturated.filter(Boolean).length, 0);

  // What the misses were made of: each shifted pair's own spread, projected to more repeats a side.
  const shiftDeltas = results.map((p) => Number.parseFloat(p.shifted.rows.find((r) => r.metric === "mean_itl_ms")?.["Δ%"] ?? "")).filter(Number.isFinite);
  const measuredShiftPct = percentile(shiftDeltas, 50);
  const shiftedRepeats = results.map((p) => ({ base: p.itl[0]!, next: p.itl[2]! })).filter((r) => r.base.length >= 2 && r.next.length >= 2);
  const neededCaught = Math.ceil((REQUIRED_OF_20 / 20) * pairs);
  const projectedNow = projectedCaught(shiftedRepeats, REPEAT, measuredShiftPct, TIGHT_LIMIT_PCT);
  const needed = repeatsFor(shiftedRepeats, neededCaught, measuredShiftPct, TIGHT_LIMIT_PCT);
  const cvs = results
    .flatMap((p) => p.itl)
    .filter((xs) => xs.length >= 2)
    .map((xs) => meanInterval(xs).cv * 100);
  const decided = !ctx.quick && failedRuns === 0;

  const pairRows = results.map((p, i) => {
    const itl = (j: Judged) => {
      const r = j.rows.find((x) => x.metric === "mean_itl_ms");
      return r ? `${r["Δ%"]} (${r["95% CI"]}) ${r.verdict}` : "n/a";
    };
    const others = p.same.rows.filter((r) => r.limit !== "-" && r.verdict !== "same" && r.verdict !== "better").map((r) => `${r.metric} ${r.verdict}`);
    return [
      String(i + 1),
      `${p.same.code} / ${p.sameTight.code} / ${p.shifted.code}`,
      itl(p.sameTight),
      itl(p.shifted),
      others.join(", ") || "-",
      p.saturated.map((s) => (s ? "yes" : "no")).join(" / "),
    ];
  });
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  return {
    name: "compare-repeats",
    title: `Compare with --repeat ${REPEAT}: verdicts over ${pairs} pairs of runs against identical mocks and against a mock ${SHIFT_PCT} % slower per token`,
    columns: [
      "pairs",
      "metric",
      "limit",
      "pairs judged",
      "REGRESSED",
      "inconclusive",
      "same",
      "better",
      "other",
      "Δ% median",
      "95% CI width median (points)",
      "95% CI width max (points)",
    ],
    rows,
    targets: [
      {
        target: `no REGRESSED verdict for ${pairs} pairs with --repeat ${REPEAT} against one mock (default limits and ${TIGHT})`,
        measured: `${falseRegressions} REGRESSED; ${identicalFailExits} of ${pairs} pairs exited non-zero${saturatedRuns ? `; ${saturatedRuns} runs client-saturated` : ""}${failedRuns ? `; ${failedRuns} runs failed` : ""}`,
        pass: decided ? falseRegressions === 0 : null,
      },
      {
        target: `NEW --itl-ms +${SHIFT_PCT} %: mean_itl_ms REGRESSED at ${TIGHT} in >= ${REQUIRED_OF_20} of 20 pairs (--repeat ${REPEAT})`,
        measured: `${caught} of ${pairs} (median Δ ${fmt(measuredShiftPct, 2)} %; CV of mean_itl_ms over a run's repeats: median ${fmt(percentile(cvs, 50), 3)} %, max ${fmt(Math.max(...cvs), 3)} %; ${neededCaught} of ${pairs} projected at ${needed ?? "> 50"} repeats a side)`,
        pass: decided ? caught * 20 >= REQUIRED_OF_20 * pairs : null,
      },
    ],
    notes: [
      `Mocks: ${mockArgs(ITL_MS).join(" ")}; the shifted one --itl-ms ${fmt(shiftedItlMs, 2)}. Each run: ${RUN_ARGS.join(" ")} (llama2 tokenizer); each pair is BASE, NEW on the same mock, NEW on the shifted mock, one after another.`,
      `Verdicts are read from the compiled binary's \`compare --md\` table: REGRESSED only when the whole 95 % Welch interval of Δ% lies past the limit, inconclusive when it straddles it. "identical mocks, default limits" lists every metric compare gates on repeats (its defaults plus the repeated-only ones); "other" is any other verdict (untrustworthy: NEW's client saturated).`,
      `Repeats needed: each shifted pair's two sides' spread of mean_itl_ms as measured over their ${REPEAT} repeats, the median Δ of all pairs as the shift, and the 95 % Welch half-width recomputed for N repeats a side; the fewest N at which ${neededCaught} of ${pairs} pairs clear the ${TIGHT_LIMIT_PCT} % limit is ${needed ?? "more than 50"} (the same projection at N = ${REPEAT} gives ${projectedNow}, the measured count ${caught}). A repeat the box stalled is what widens an interval: the projection assumes stalls stay as frequent per repeat.`,
      `Box: load average (1, 5, 15 min) ${load(loadBefore)} before and ${load(loadAfter)} after; ${fmt(elapsedS, 0)} s of runs; ${saturatedRuns} of ${results.length * 3} runs saw their client saturated.`,
    ],
    extraTables: [
      {
        title: "Compare with --repeat: every pair",
        columns: [
          "pair",
          "exit: identical / identical tight / shifted",
          `identical, ${TIGHT}: mean_itl_ms Δ% (95% CI) verdict`,
          `shifted, ${TIGHT}: mean_itl_ms Δ% (95% CI) verdict`,
          "identical, default limits: not same/better",
          "client saturated: BASE / NEW / shifted NEW",
        ],
        rows: pairRows,
      },
    ],
    trials: [],
    figures: { pairs, repeat: REPEAT, falseRegressions, caught, failedRuns, saturatedRuns, projectedAtRepeat: projectedNow, repeatsNeeded: needed },
    details: {
      sizes: { pairs, ...SIZES, itl_ms: ITL_MS, shifted_itl_ms: shiftedItlMs, limit: TIGHT },
      load_average_before: loadBefore,
      load_average_after: loadAfter,
      mean_itl_ms_repeats: results.map((p) => ({ base: p.itl[0], same: p.itl[1], shifted: p.itl[2] })),
    },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
