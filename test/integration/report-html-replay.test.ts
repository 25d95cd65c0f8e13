/**
 * A trace replay's report, read in headless Chromium from the page's chart objects: the window lines (axis `window`)
 * draw hit ratio, observed and expected, and TTFT over trace time (window index x --window seconds), one curve for
 * the run; the whole replay's ttft_by_cached_fraction draws TTFT against the cached fraction. Every point is the
 * JSONL's number; the rate charts leave the windows out (their rate is the trace's, not one offered); the Markdown
 * report tables the same numbers; the page logs no error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { generateTrace, traceText } from "../helpers/mooncake-trace.ts";
import { openReport, type DrawnChart } from "../helpers/report-page.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-replay-"));
const B = 64;
const WINDOW_S = 2;
let browser: Browser;
let lines: any[];
let html: string;
let md: string;

const byLabel = (c: DrawnChart, label: string) => {
  const d = c.datasets.find((x) => x.label === label);
  if (d === undefined) throw new Error(`no dataset ${label} in ${c.datasets.map((x) => x.label).join(" | ")}`);
  return d.data;
};
const cell = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2));

beforeAll(async () => {
  const trace = generateTrace({
    blockSize: B,
    systems: 2,
    systemBlocks: 3,
    conversations: 8,
    turns: 4,
    maxTurnTokens: 150,
    turnGapMs: 2000,
    startGapMs: 700,
    outputLength: 4,
    seed: 9,
  });
  const tracePath = join(dir, "trace.jsonl");
  writeFileSync(tracePath, traceText(trace));
  // A slow prefill makes the cached fraction show in TTFT.
  const server = await startMockServer(mockOptions({ port: 0, pageSize: 1, ttftBaseMs: 1, prefillUsPerToken: 40, itlMs: 1 }));
  const out = join(dir, "replay.jsonl");
  try {
    const r = await runCli([
      "replay",
      tracePath,
      "--block-size",
      String(B),
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--settle",
      "0",
      "--window",
      String(WINDOW_S),
      "--time-scale",
      "0.5",
      "--quiet",
      "--output-file",
      out,
    ]);
    if (r.code !== 0) throw new Error(`replay exited ${r.code}: ${r.stderr}`);
  } finally {
    await server.stop();
  }
  lines = readJsonl(out).filter((l: any) => l.type !== "run");
  html = join(dir, "replay.html");
  md = join(dir, "replay.md");
  const r = await runCli(["report", out, "--html", html, "--md", md]);
  expect(r.code).toBe(0);
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe("a replay's report", () => {
  test("hit ratio and TTFT over trace time, and TTFT against the cached fraction, hold the JSONL's numbers", async () => {
    const windows = lines.filter((l) => typeof l.window === "number");
    const whole = lines.find((l) => l.window === undefined);
    expect(windows.length).toBeGreaterThan(2);
    expect(whole).toBeDefined();
    const over = (key: string) =>
      windows
        .map((l) => ({ x: l.window * WINDOW_S, y: l[key] }))
        .filter((p) => typeof p.y === "number")
        .sort((a, b) => a.x - b.x);
    const { charts, problems, page } = await openReport(html, browser);
    try {
      expect(problems).toEqual([]);
      const hit = charts["window-hit-ratio"]!;
      expect(hit.xType).toBe("linear");
      expect(byLabel(hit, "by window observed")).toEqual(over("observed_hit_ratio"));
      expect(byLabel(hit, "by window expected")).toEqual(over("expected_hit_ratio"));
      // The trace's later turns reuse their history: some window has hits, so the curve is not flat at zero.
      expect(Math.max(...over("observed_hit_ratio").map((p) => p.y))).toBeGreaterThan(0.3);
      const ttft = charts["window-ttft"]!;
      expect(byLabel(ttft, "by window median")).toEqual(over("median_ttft_ms"));
      expect(byLabel(ttft, "by window p99")).toEqual(over("p99_ttft_ms"));
      for (const d of [...hit.datasets, ...ttft.datasets]) expect(d.drawn).toBe(d.data.length);

      const fraction = charts["cached-fraction-ttft"]!;
      const buckets = (whole.ttft_by_cached_fraction as any[]).filter((b) => b.median_ttft_ms !== null);
      expect(buckets.length).toBeGreaterThan(1);
      expect(fraction.datasets.map((d) => d.label)).toEqual(["median TTFT"]);
      expect(fraction.datasets[0]!.data).toEqual(buckets.map((b) => ({ x: (b.from + b.to) / 2, y: b.median_ttft_ms })));
      // Uncached prompts pay the prefill: the least cached quartile is the slowest.
      expect(buckets[0].median_ttft_ms).toBeGreaterThan(buckets.at(-1).median_ttft_ms);

      // A window's rate is the trace's own: no load curve of one-point windows.
      expect(Object.keys(charts).filter((id) => id.startsWith("rate-"))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test("the Markdown report tables the same numbers", () => {
    const text = readFileSync(md, "utf8");
    expect(text).toContain("Hit ratio over trace time");
    expect(text).toContain("TTFT against the cached fraction of the prompt");
    const w = lines.find((l) => l.window === 1);
    expect(text).toMatch(new RegExp(`\\| by window \\| ${WINDOW_S} \\| ${cell(w.observed_hit_ratio).replace(".", "\\.")} \\|`));
  });
});
