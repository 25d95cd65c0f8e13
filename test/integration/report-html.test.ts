/**
 * `warmbench report --html/--md` of three runs against mocks with different settings (one serving a model whose
 * name is markup), opened in a real headless Chromium from the file with the network off: no console error, no
 * request, every chart drawn with one series per run, the tables showing the JSONL's numbers, the name as text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";

const EVIL = "<img src=x onerror=alert(1)>";
const dir = mkdtempSync(join(tmpdir(), "warmbench-report-html-"));
const PCTS = [0, 50, 90];
const mocks: MockServer[] = [];
const files: string[] = [];
let report: CliResult;
let browser: Browser;

/** The table cell text of a number, as the report formats it (integers as they are, others with 2 decimals). */
const cell = (v: number | null): string => (v === null ? "n/a" : Number.isInteger(v) ? String(v) : v.toFixed(2));

beforeAll(async () => {
  const settings: Array<[Partial<MockOptions>, string[]]> = [
    [{ prefillUsPerToken: 10 }, ["--gate", "p99_ttft_ms<=100000", "--gate", "mean_ttft_ms<0@pct=90"]],
    [{ prefillUsPerToken: 40 }, []],
    [{ prefillUsPerToken: 20, modelName: EVIL }, ["--backend", "vllm"]],
  ];
  for (const [i, [opts, extra]] of settings.entries()) {
    const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, ttftBaseMs: 2, ...opts }));
    mocks.push(mock);
    const out = join(dir, `run${i}.jsonl`);
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      PCTS.join(","),
      "--num-prompts",
      "6",
      "--total-tokens",
      "2000",
      "--output-len",
      "6",
      "--max-concurrency",
      "3",
      "--settle",
      "0",
      "--output-file",
      out,
      "--request-details",
      join(dir, `details${i}.jsonl`),
      ...extra,
    ]);
    if (r.code !== 0 && r.code !== 6) throw new Error(`run ${i} exited ${r.code}: ${r.stderr}`);
    files.push(out);
  }
  report = await runCli(["report", ...files, "--html", join(dir, "report.html"), "--md", join(dir, "report.md")]);
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
  for (const m of mocks) await m.stop();
});

describe("report --html / --md", () => {
  test("one self-contained file: scripts and styles inline, nothing to fetch", () => {
    expect(report.code).toBe(0);
    expect(report.stdout).toBe("");
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("Chart.js v4");
    expect(html).not.toMatch(/<(script|link|img|iframe)\b[^>]*\b(src|href)=/i);
    expect(html).not.toMatch(/sourceMappingURL/);
    expect(html).toContain("default-src 'none'");
    // The name is never markup in the file, whatever the browser does with it.
    expect(html).not.toContain(EVIL);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });

  test("in Chromium, offline: no console error, no request, every chart drawn with one series per run", async () => {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("dialog", (d) => problems.push(`dialog: ${d.message()}`));
    page.on("request", (r) => !r.url().startsWith("file:") && !r.url().startsWith("data:") && requests.push(r.url()));
    await page.goto(`file://${join(dir, "report.html")}`);
    await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
    const charts = await page.evaluate(() => {
      const { Chart, document } = globalThis as any;
      return [...document.querySelectorAll("canvas")].map((canvas: any) => {
        const chart = Chart.getChart(canvas);
        const { width, height } = canvas;
        const pixels = canvas.getContext("2d")!.getImageData(0, 0, width, height).data;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
        return {
          id: canvas.id,
          datasets: chart.data.datasets.length,
          drawnPoints: chart.data.datasets.map((_: unknown, i: number) => chart.getDatasetMeta(i).data.length),
          points: chart.data.datasets.map((d: { data: unknown[] }) => d.data.length),
          painted,
        };
      });
    });
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
    const expected: Record<string, number> = {
      "chart-ttft-mean": 3,
      "chart-ttft-median": 3,
      "chart-ttft-p99": 3,
      "chart-output-throughput": 3,
      "chart-itl-p99": 3,
      // Points and the fitted line per run; points per run and the diagonal.
      "chart-ttft-model": 6,
      "chart-cached-tokens": 4,
      "chart-ttft-cdf": 3,
      "chart-itl-cdf": 3,
      // One line over time (the first; a selector picks another): two curves and the steady-state band.
      "chart-timeline": 3,
      "chart-timeline-latency": 3,
      // The servers' counters against the client's (issue 39, --scrape-interval on by default): one bar series.
      "chart-telemetry-reconciliation": 1,
    };
    // KV usage and queue over time are drawn where a scrape fell inside a line's buckets: these lines are about as long
    // as the 1 s interval, so on a loaded box some are, and then KV usage, running, waiting and the steady-state band.
    const drawn = Object.fromEntries(charts.map((c) => [c.id, c.datasets]));
    if ("chart-telemetry" in drawn) expect(drawn["chart-telemetry"]).toBe(4);
    delete drawn["chart-telemetry"];
    expect(drawn).toEqual(expected);
    for (const c of charts) {
      expect(c.painted).toBeGreaterThan(5000);
      expect(c.drawnPoints).toEqual(c.points);
      expect(Math.min(...c.points)).toBeGreaterThan(0);
    }
    await page.close();
  });

  test("the tables show the JSONL's numbers, one column per run", async () => {
    const page = await browser.context.newPage();
    await page.goto(`file://${join(dir, "report.html")}`);
    const table = (id: string) =>
      page.evaluate(
        (tableId) =>
          [...(globalThis as any).document.querySelectorAll(`#${tableId} tbody tr`)].map((tr: any) =>
            [...tr.querySelectorAll("td")].map((td: any) => td.textContent as string),
          ),
        id,
      );
    const lines = files.map((f) => readSweepLines(f));
    for (const [id, key] of [
      ["table-ttft-mean", "mean_ttft_ms"],
      ["table-ttft-p99", "p99_ttft_ms"],
      ["table-output-throughput", "output_throughput"],
      ["table-itl-p99", "p99_itl_ms"],
    ] as const) {
      expect(await table(id)).toEqual(PCTS.map((pct, row) => [`${pct}%`, ...lines.map((l) => cell(l[row][key]))]));
    }
    const gates = await table("table-gates");
    expect(gates).toHaveLength(PCTS.length + 1);
    expect(gates.at(-1)!.slice(1)).toEqual(["90%", "mean_ttft_ms<0@pct=90", cell(lines[0]![2].mean_ttft_ms), "FAIL"]);
    expect(await page.textContent(".verdict")).toBe("1 of 4 gate verdicts FAIL.");
    await page.close();
  });

  test("runs are named by what differs; a model named as markup shows as text", async () => {
    const page = await browser.context.newPage();
    let dialogs = 0;
    page.on("dialog", async (d) => {
      dialogs++;
      await d.dismiss();
    });
    await page.goto(`file://${join(dir, "report.html")}`);
    await page.waitForSelector("html[data-charts-ready]");
    const labels = await page.$$eval("#series li", (items) => items.map((li) => li.textContent));
    // The mock's prefill cost alone tells the three apart; the other differences are in the table.
    expect(labels).toEqual(["mock.prefill_us_per_token=10, …", "mock.prefill_us_per_token=40, …", "mock.prefill_us_per_token=20, …"]);
    const differences = await page.textContent("#table-differences");
    expect(differences).toContain("options.backend");
    expect(differences).toContain(`server_info.model_path${"mock-model".repeat(2)}${EVIL}`);
    expect(await page.$$eval("img", (imgs) => imgs.length)).toBe(0);
    expect(await page.textContent("#table-runs")).toContain(EVIL);
    expect(dialogs).toBe(0);
    // Choosing another pct redraws the CDFs from that pct's histograms.
    await page.selectOption("#select-ttft-cdf", "0");
    const medians = await page.evaluate(() =>
      (globalThis as any).warmbenchCharts["ttft-cdf"].data.datasets.map((d: { data: Array<{ x: number; y: number }> }) => d.data.find((p) => p.y >= 0.5)!.x),
    );
    // The CDF's median is the first TTFT at which half the requests are done: with 6 requests the 3rd smallest (the
    // script's median_ttft_ms averages the 3rd and 4th, which a busy box can push apart), to the histogram's precision.
    for (const [i, m] of medians.entries()) {
      const ttfts = readJsonl(join(dir, `details${i}.jsonl`))
        .filter((d) => d.pct === PCTS[0] && d.ok)
        .map((d) => d.ttft_ms as number)
        .sort((a, b) => a - b);
      expect(ttfts).toHaveLength(6);
      expect(Math.abs(m - ttfts[2]!)).toBeLessThan(0.01 * ttfts[2]! + 0.01);
    }
    await page.close();
  });

  test("the Markdown holds the same tables", () => {
    const md = readFileSync(join(dir, "report.md"), "utf8");
    const lines = files.map((f) => readSweepLines(f));
    expect(md).toContain("**1 of 4 gate verdicts FAIL.**");
    expect(md).toContain("### Mean TTFT");
    for (const [row, pct] of PCTS.entries()) expect(md).toContain(`| ${pct}% | ${lines.map((l) => cell(l[row].mean_ttft_ms)).join(" | ")} |`);
    expect(md).toContain("\\<img src=x onerror=alert(1)\\>");
    expect(md).not.toContain(EVIL);
  });
});

describe("report --html / --md of a sweep file and a multi-turn file together", () => {
  const ROUNDS = 3;
  let rounds: any[];
  let mixed: CliResult;
  beforeAll(async () => {
    const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, ttftBaseMs: 2 }));
    mocks.push(mock);
    const out = join(dir, "multiturn.jsonl");
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--num-clients",
      "3",
      "--num-rounds",
      String(ROUNDS),
      "--shared-system-tokens",
      "64",
      "--turn-tokens",
      "48",
      "--output-len",
      "4",
      "--settle",
      "0",
      "--output-file",
      out,
    ]);
    if (r.code !== 0) throw new Error(`multiturn exited ${r.code}: ${r.stderr}`);
    rounds = readJsonl(out);
    mixed = await runCli(["report", files[1]!, out, "--html", join(dir, "mixed.html"), "--md", join(dir, "mixed.md")]);
  });

  test("in Chromium: the round charts hold the round lines' numbers, next to the sweep's charts", async () => {
    expect(mixed.code).toBe(0);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await page.goto(`file://${join(dir, "mixed.html")}`);
    await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
    const charts: Record<string, any> = await page.evaluate(() => {
      const all = (globalThis as any).warmbenchCharts as Record<string, any>;
      return Object.fromEntries(
        Object.entries(all).map(([id, c]) => [
          id,
          {
            type: c.config.type,
            datasets: c.data.datasets.map((d: any, i: number) => ({ label: d.label, stack: d.stack, data: d.data, drawn: c.getDatasetMeta(i).data.length })),
          },
        ]),
      );
    });
    expect(errors).toEqual([]);
    // The sweep's charts: one series (the sweep run); the multi-turn run is drawn in its own charts.
    expect(charts["ttft-mean"].datasets).toHaveLength(1);
    const byRound = (key: string) => rounds.map((l) => ({ x: l.round, y: l[key] }));
    const hit = charts["round-hit-ratio"].datasets;
    expect(hit.map((d: any) => d.data)).toEqual([byRound("expected_hit_ratio"), byRound("observed_hit_ratio")]);
    expect(rounds.at(-1).expected_hit_ratio).toBeGreaterThan(rounds[0].expected_hit_ratio); // the histories grow
    expect(charts["round-ttft"].datasets.map((d: any) => d.data)).toEqual([byRound("mean_ttft_ms"), byRound("p99_ttft_ms")]);
    const tiers = charts["round-tiers"];
    expect(tiers.type).toBe("bar");
    expect(tiers.datasets.map((d: any) => d.label.split(" ").at(-1))).toEqual(["device", "host", "storage"]);
    expect(new Set(tiers.datasets.map((d: any) => d.stack)).size).toBe(1);
    expect(tiers.datasets[0].data).toEqual(rounds.map((l) => ({ x: l.round, y: l.cached_tokens_by_tier.device })));
    for (const c of Object.values(charts) as any[]) for (const d of c.datasets) expect(d.drawn).toBe(d.data.length);
    const labels = await page.$$eval("#series li", (items) => items.map((li) => li.textContent));
    expect(labels).toHaveLength(2);
    expect(await page.textContent("#table-runs")).toContain("3 clients x 3 rounds");
    await page.close();
  });

  test("the Markdown holds the round tables, rows labelled by round", () => {
    const md = readFileSync(join(dir, "mixed.md"), "utf8");
    expect(md).toContain("### Hit ratio per round: expected and observed");
    const cellOf = (v: number) => cell(v);
    for (const l of rounds) expect(md).toContain(`| round ${l.round} | ${cellOf(l.mean_ttft_ms)} | ${cellOf(l.p99_ttft_ms)} |`);
    expect(md).toContain("### Mean TTFT");
  });

  test("a multi-turn file alone makes a report (it used to be refused: holds no pct line)", async () => {
    const r = await runCli(["report", join(dir, "multiturn.jsonl"), "--md", "-"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("### TTFT per round: mean and P99");
    expect(r.stdout).not.toContain("### Mean TTFT");
  });
});
