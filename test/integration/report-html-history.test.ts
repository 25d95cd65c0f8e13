/**
 * `warmbench report --html --history` in a real headless Chromium: three runs of the binary against mocks each
 * slower to the first token than the last, put in a history (the first by `history add --tag`, the others by
 * `run --history`); the trend charts have one series per line key, one point per run in the order the runs
 * started, the values `history show` reads, x labels carrying the start and the tag, and no console error. A results
 * file given beside --history is drawn as the newest point and not stored; --tag keeps only its runs; the flags
 * of --history without it, and a missing or empty history, exit 2 before anything is written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { compareMetric } from "../../src/compare/metrics.ts";
import { KEY_METRICS } from "../../src/history/runs.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-history-"));
const db = join(dir, "history.db");
const PCTS = [0, 80];
const TAG = "v1.2";
/** Each run's server is slower to the first token than the one before: the trend must rise, oldest first. */
const TTFT_BASE_MS = [2, 40, 80, 120];
let browser: Browser;
/** The three stored runs' lines, oldest first, and a fourth run's file that is never stored. */
const stored: any[][] = [];
let newest: { file: string; lines: any[] };

async function measure(i: number, extra: string[]): Promise<{ file: string; lines: any[] }> {
  const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, ttftBaseMs: TTFT_BASE_MS[i]! }));
  const file = join(dir, `run${i}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      PCTS.join(","),
      "--num-prompts",
      "3",
      "--total-tokens",
      "600",
      "--output-len",
      "3",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
      ...extra,
    ]);
    if (r.code !== 0) throw new Error(`run ${i} exited ${r.code}: ${r.stderr}`);
  } finally {
    await mock.stop();
  }
  return { file, lines: readSweepLines(file) };
}

beforeAll(async () => {
  const first = await measure(0, []);
  const add = await runCli(["history", "add", first.file, "--tag", TAG, "--db", db]);
  if (add.code !== 0) throw new Error(`history add exited ${add.code}: ${add.stderr}`);
  stored.push(first.lines);
  for (const i of [1, 2]) stored.push((await measure(i, ["--history", "--db", db])).lines);
  newest = await measure(3, []);
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

interface DrawnTrend {
  datasets: Array<{ label: string; data: Array<{ x: number; y: number }>; drawn: number }>;
  ticks: string[];
}

/** The page in Chromium: the history charts as drawn (with the x ticks Chart.js laid out), every chart id, problems. */
async function open(html: string): Promise<{ trends: Record<string, DrawnTrend>; ids: string[]; problems: string[]; rows: string[][] }> {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("request", (r) => !r.url().startsWith("file://") && problems.push(`request: ${r.url()}`));
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
  const { trends, ids } = await page.evaluate(() => {
    const all = (globalThis as any).warmbenchCharts as Record<string, any>;
    const trends = Object.fromEntries(
      Object.entries(all)
        .filter(([id]) => id.startsWith("history-"))
        .map(([id, c]) => [
          id,
          {
            datasets: c.data.datasets.map((d: any, i: number) => ({ label: d.label, data: d.data, drawn: c.getDatasetMeta(i).data.length })),
            ticks: c.scales.x.ticks.map((t: any) => String(t.label)),
          },
        ]),
    );
    return { trends, ids: Object.keys(all) };
  });
  const rows = await page.$$eval("#table-history-mean_ttft_ms tbody tr", (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
  );
  await page.close();
  return { trends, ids, problems, rows };
}

/** The x label the report should give a run: its start to the minute, then its tag (or its file's name). */
const xLabel = (lines: any[], name: string | null) => `${lines[0].run.started_at.slice(0, 16).replace("T", " ")}${name ? ` ${name}` : ""}`;
const metricValue = (line: any, metric: string): number => compareMetric(metric)!.read(line).value!;
/** Each line key's points: one per run, x its place, y its value. */
const expected = (runs: any[][], metric: string) =>
  PCTS.map((pct) => ({
    label: `${pct}%`,
    data: runs.map((lines, x) => ({
      x,
      y: metricValue(
        lines.find((l) => l.shared_prefix_pct === pct),
        metric,
      ),
    })),
  }));

describe("report --html --history", () => {
  test("one chart per key metric: a series per line key, a point per stored run, oldest first, tags on the x axis", async () => {
    const html = join(dir, "trend.html");
    const r = await runCli(["report", "--html", html, "--history", "--db", db]);
    expect(r.code).toBe(0);
    const { trends, ids, problems, rows } = await open(html);
    expect(problems).toEqual([]);
    // Without FILES the page is the trend alone.
    expect(ids).toEqual(KEY_METRICS.map((m) => `history-${m}`));
    const labels = [xLabel(stored[0]!, TAG), xLabel(stored[1]!, null), xLabel(stored[2]!, null)];
    for (const metric of KEY_METRICS) {
      const t = trends[`history-${metric}`]!;
      expect(t.datasets.map(({ label, data }) => ({ label, data }))).toEqual(expected(stored, metric));
      for (const d of t.datasets) expect(d.drawn).toBe(3);
      expect(t.ticks).toEqual(labels);
    }
    // The servers got slower run by run: the points rise left to right.
    for (const d of trends["history-mean_ttft_ms"]!.datasets) {
      expect(d.data[0]!.y).toBeLessThan(d.data[1]!.y);
      expect(d.data[1]!.y).toBeLessThan(d.data[2]!.y);
    }
    // The table beside the chart: a row per run, its label and id, then each line's value.
    expect(rows).toEqual(
      stored.map((lines, i) => [
        labels[i]!,
        lines[0].run_id,
        ...PCTS.map((p) =>
          metricValue(
            lines.find((l) => l.shared_prefix_pct === p),
            "mean_ttft_ms",
          ).toFixed(2),
        ),
      ]),
    );
  });

  test("FILES beside --history are the newest points, drawn with their own charts, and not stored", async () => {
    const before = (await runCli(["history", "list", "--db", db])).stdout;
    const html = join(dir, "with-file.html");
    const r = await runCli(["report", newest.file, "--html", html, "--history", "--db", db]);
    expect(r.code).toBe(0);
    const { trends, ids, problems } = await open(html);
    expect(problems).toEqual([]);
    expect(ids).toContain("ttft-mean");
    const t = trends["history-p99_ttft_ms"]!;
    expect(t.datasets.map(({ label, data }) => ({ label, data }))).toEqual(expected([...stored, newest.lines], "p99_ttft_ms"));
    expect(t.ticks.at(-1)).toBe(xLabel(newest.lines, "run3.jsonl"));
    expect(t.ticks[0]).toEndWith(TAG);
    const after = await runCli(["history", "list", "--db", db]);
    expect(after.stdout).toBe(before);
    expect(after.stdout).not.toContain(newest.lines[0].run_id);
  });

  test("--tag draws only the runs with that tag; --md holds the same trend tables", async () => {
    const html = join(dir, "tagged.html");
    const r = await runCli(["report", "--html", html, "--md", "-", "--history", "--db", db, "--tag", TAG]);
    expect(r.code).toBe(0);
    const { trends, problems } = await open(html);
    expect(problems).toEqual([]);
    expect(trends["history-mean_itl_ms"]!.datasets.map(({ label, data }) => ({ label, data }))).toEqual(expected([stored[0]!], "mean_itl_ms"));
    expect(trends["history-mean_itl_ms"]!.ticks).toEqual([xLabel(stored[0]!, TAG)]);
    for (const m of KEY_METRICS) expect(r.stdout).toContain(`### History: ${m}\n`);
    expect(r.stdout).not.toContain("### Runs");
    expect(r.stdout).toContain(stored[0]![0].run_id);
    expect(r.stdout).not.toContain(stored[1]![0].run_id);
  });

  test("bad input exits 2 with one line naming the flag, and writes nothing", async () => {
    const out = join(dir, "bad.html");
    const cases: Array<[string[], RegExp]> = [
      [["report", "--history", "--db", db], /--history draws its trend in the --html or --md report/],
      [["report", newest.file, "--html", out, "--db", db], /--db belongs to --history/],
      [["report", newest.file, "--html", out, "--tag", TAG], /--tag belongs to --history/],
      [["report", "--html", out], /expects a JSONL results file .*or --history/],
      [["report", "--html", out, "--history", "--db", join(dir, "absent.db")], /--db .*absent\.db: no history yet/],
      [["report", "--html", out, "--history", "--db", db, "--tag", "nope"], /no run tagged nope in --db/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, "absent.db"))).toBe(false);
    // Every report above only read the database: it still holds the three runs.
    const list = (await runCli(["history", "list", "--db", db])).stdout;
    for (const lines of stored) expect(list).toContain(lines[0].run_id);
    expect(list).not.toContain(newest.lines[0].run_id);
  });
});
