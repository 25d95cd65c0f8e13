/**
 * `warmbench report` of a capacity search, read in a real headless Chromium from the page's chart objects: for the
 * selected pct the probes as points of the binding gate's value against the load they offered (passing and failing
 * apart), the gate's SLO as a horizontal line and the capacity found as a vertical one; the capacity against the
 * pct; the Markdown's tables with the same numbers. The probes are not drawn as a rate sweep.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-capacity-"));
const file = join(dir, "search.jsonl");
const html = join(dir, "search.html");
const md = join(dir, "search.md");
const SLO = { 0: 250, 90: 160 } as Record<number, number>;
let browser: Browser;
let server: MockServer;
let probes: any[];
let capacity: any[];

beforeAll(async () => {
  // 8 slots, ~0.25 s a request: a capacity of ~30 req/s at 90 %, found coarsely (20 %) to keep the test short.
  server = await startMockServer(mockOptions({ port: 0, maxRunning: 8, ttftBaseMs: 50, itlMs: 10, prefillUsPerToken: 50 }));
  const r = await runCli(
    [
      "capacity",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--total-tokens",
      "2000",
      "--output-len",
      "20",
      "--pcts",
      "0,90",
      "--num-prompts",
      "24",
      "--burstiness",
      "inf",
      "--start",
      "20",
      "--precision",
      "20%",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
      "--gate",
      `ttft_from_intended_p99_ms<=${SLO[0]}@pct=0`,
      "--gate",
      `ttft_from_intended_p99_ms<=${SLO[90]}@pct=90`,
    ],
    { timeoutMs: 240_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  const lines = readJsonl(file);
  probes = lines.filter((l) => l.type === undefined);
  capacity = lines.filter((l) => l.type === "capacity");
  const rep = await runCli(["report", file, "--html", html, "--md", md]);
  expect(rep.code, rep.stderr).toBe(0);
  browser = await openBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Drawn = Record<string, { yType: string; datasets: Array<{ label: string; data: Array<{ x: number; y: number }>; drawn: number }> }>;

async function charts(): Promise<{ charts: Drawn; problems: string[] }> {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
  const drawn = await page.evaluate(() => {
    const all = (globalThis as any).warmbenchCharts as Record<string, any>;
    return Object.fromEntries(
      Object.entries(all).map(([id, c]) => [
        id,
        {
          yType: c.scales.y?.type,
          datasets: c.data.datasets.map((d: any, i: number) => ({ label: d.label, data: d.data, drawn: c.getDatasetMeta(i).data.length })),
        },
      ]),
    );
  });
  await page.close();
  return { charts: drawn as Drawn, problems };
}

/** A number's table cell, as the report formats it (integers as they are, others with 2 decimals). */
const cell = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2));
const sorted = (pts: Array<{ x: number; y: number }>) => [...pts].sort((a, b) => a.x - b.x);

describe("a capacity search's report", () => {
  test("the selected pct's probes against the load, the SLO line and the capacity marked", async () => {
    const { charts: c, problems } = await charts();
    expect(problems).toEqual([]);
    const chart = c["capacity-probes"]!;
    const at90 = probes.filter((p) => p.shared_prefix_pct === 90 && typeof p.request_rate === "number");
    const gate = `ttft_from_intended_p99_ms<=${SLO[90]}@pct=90`;
    const point = (p: any) => ({ x: p.request_rate, y: p.gates.find((g: any) => g.expr === gate).value });
    const passing = at90.filter((p) => p.gates.every((g: any) => g.pass));
    const failing = at90.filter((p) => !p.gates.every((g: any) => g.pass));
    expect(passing.length).toBeGreaterThan(0);
    expect(failing.length).toBeGreaterThan(0);
    const data = (label: string) => chart.datasets.find((d) => d.label.endsWith(label))?.data;
    expect(data(`${gate} passing`)).toEqual(sorted(passing.map(point)));
    expect(data("failing")).toEqual(sorted(failing.map(point)));
    const top = Math.max(...at90.map((p) => p.request_rate));
    expect(data(`SLO <= ${SLO[90]}`)).toEqual([
      { x: 0, y: SLO[90]! },
      { x: top, y: SLO[90]! },
    ]);
    const found = capacity.find((l) => l.shared_prefix_pct === 90).capacity_request_rate;
    const vertical = chart.datasets.find((d) => d.label.includes("capacity"))!;
    expect(vertical.data.map((p) => p.x)).toEqual([found, found]);
    for (const d of chart.datasets) expect(d.drawn).toBe(d.data.length);
    // The probes are the search's, not a rate sweep's: no load curves of them.
    expect(Object.keys(c).filter((id) => id.startsWith("rate-"))).toEqual([]);
  });

  test("the capacity against the pct, one point per capacity line; the Markdown tables hold the same numbers", async () => {
    const { charts: c } = await charts();
    const line = c["capacity-pct"]!.datasets[0]!;
    expect(line.data).toEqual(capacity.map((l) => ({ x: l.shared_prefix_pct, y: l.capacity_request_rate })));
    const text = readFileSync(md, "utf8");
    expect(text).toContain("### Capacity against the shared prefix");
    for (const l of capacity) {
      const row = text.split("\n").find((r) => r.startsWith(`| search.jsonl | ${l.shared_prefix_pct} | ${cell(l.capacity_request_rate)} |`));
      expect(row, `no row for ${l.shared_prefix_pct}%`).toBeDefined();
      expect(row).toContain(`| ${l.probes_sent} |`);
    }
  });

  test("a search reads as a search: what it found first, no FAIL banner for the probes above the capacity", () => {
    const failingProbes = probes.filter((p) => (p.gates ?? []).some((g: any) => !g.pass)).length;
    expect(failingProbes).toBeGreaterThan(0);
    const page = readFileSync(html, "utf8");
    const text = readFileSync(md, "utf8");
    for (const l of capacity) {
      const found = `${l.shared_prefix_pct}%: ${cell(l.capacity_request_rate)} req/s, ${l.probes_sent} probes`;
      expect(page).toContain(found);
      expect(text).toContain(found);
    }
    expect(page).toContain('<p class="verdict pass">Capacity search:');
    expect(page).not.toContain("gate verdicts FAIL");
    expect(text).not.toContain("gate verdicts FAIL");
  });

  test("the gate's axis shows the SLO and the passing probes: logarithmic when the probes span more than 20x", async () => {
    const { charts: c } = await charts();
    const chart = c["capacity-probes"]!;
    const ys = chart.datasets.filter((d) => !d.label.includes("capacity")).flatMap((d) => d.data.map((p) => p.y));
    const spread = Math.max(...ys) / Math.min(...ys);
    expect(chart.yType).toBe(spread > 20 ? "logarithmic" : "linear");
  });
});
