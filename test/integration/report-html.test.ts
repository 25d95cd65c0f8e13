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
import { readPctLines } from "../helpers/results.ts";

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
      "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", PCTS.join(","), "--num-prompts", "6", "--total-tokens", "2000",
      "--output-len", "6", "--max-concurrency", "3", "--settle", "0", "--output-file", out, ...extra,
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
      "chart-ttft-mean": 3, "chart-ttft-median": 3, "chart-ttft-p99": 3, "chart-output-throughput": 3, "chart-itl-p99": 3,
      // Points and the fitted line per run; points per run and the diagonal.
      "chart-ttft-model": 6, "chart-cached-tokens": 4, "chart-ttft-cdf": 3, "chart-itl-cdf": 3,
    };
    expect(Object.fromEntries(charts.map((c) => [c.id, c.datasets]))).toEqual(expected);
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
        (tableId) => [...(globalThis as any).document.querySelectorAll(`#${tableId} tbody tr`)].map((tr: any) => [...tr.querySelectorAll("td")].map((td: any) => td.textContent as string)),
        id,
      );
    const lines = files.map((f) => readPctLines(f));
    for (const [id, key] of [["table-ttft-mean", "mean_ttft_ms"], ["table-ttft-p99", "p99_ttft_ms"], ["table-output-throughput", "output_throughput"], ["table-itl-p99", "p99_itl_ms"]] as const) {
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
    const medians = await page.evaluate(() => (globalThis as any).warmbenchCharts["ttft-cdf"].data.datasets.map((d: { data: Array<{ x: number; y: number }> }) => d.data.find((p) => p.y >= 0.5)!.x));
    const lines = files.map((f) => readPctLines(f));
    for (const [i, m] of medians.entries()) expect(Math.abs(m - lines[i]![0].median_ttft_ms)).toBeLessThan(0.05 * lines[i]![0].median_ttft_ms + 0.01);
    await page.close();
  });

  test("the Markdown holds the same tables", () => {
    const md = readFileSync(join(dir, "report.md"), "utf8");
    const lines = files.map((f) => readPctLines(f));
    expect(md).toContain("**1 of 4 gate verdicts FAIL.**");
    expect(md).toContain("### Mean TTFT");
    for (const [row, pct] of PCTS.entries()) expect(md).toContain(`| ${pct}% | ${lines.map((l) => cell(l[row].mean_ttft_ms)).join(" | ")} |`);
    expect(md).toContain("\\<img src=x onerror=alert(1)\\>");
    expect(md).not.toContain(EVIL);
  });
});
