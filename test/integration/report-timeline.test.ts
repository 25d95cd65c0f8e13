/**
 * Each line over time, end to end: the compiled binary against the mock, with phases known from the schedule
 * (40 requests due every 25 ms under --max-concurrency 8, each 0.5 s long: a ramp of 8 sends, a plateau at 8 in
 * flight while the rest wait for a slot, a drain of the last 8), then `warmbench report` read in headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";
import { unpackTimeline } from "../../src/metrics/timeline.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-timeline-"));
const PROMPTS = 40;
const CAP = 8;
const GAP_S = 0.025;
let lines: any[];
let details: any[];
let html: string;
let browser: Browser;

beforeAll(async () => {
  // TTFT 20 ms, then 19 gaps of 25 ms: each request ~0.5 s, far longer than the 8 sends of the ramp (175 ms).
  const server = await startMockServer(mockOptions({ port: 0, pageSize: 16, ttftBaseMs: 20, itlMs: 25 }));
  const file = join(dir, "phases.jsonl");
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--total-tokens",
      "400",
      "--output-len",
      "20",
      "--num-prompts",
      String(PROMPTS),
      "--max-concurrency",
      String(CAP),
      "--request-rate",
      String(1 / GAP_S),
      "--burstiness",
      "inf",
      "--pcts",
      "0,90",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
      "--request-details",
      join(dir, "details.jsonl"),
    ]);
    if (r.code !== 0) throw new Error(`run exited ${r.code}: ${r.stderr}`);
  } finally {
    await server.stop();
  }
  lines = readSweepLines(file);
  details = readFileSync(join(dir, "details.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  html = join(dir, "phases.html");
  const r = await runCli(["report", file, "--html", html, "--md", join(dir, "phases.md")]);
  if (r.code !== 0) throw new Error(`report exited ${r.code}: ${r.stderr}`);
  browser = await openBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("a run with a ramp, a plateau and a drain", () => {
  test("the window is the plateau: from the 7th send (80 % of 8) to the drain's second end, its metrics over the requests sent in it", () => {
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      const s = l.steady_state;
      expect(s.rule).toBe(0.8);
      expect(s.peak_in_flight).toBe(CAP);
      expect(s.min_in_flight).toBe(7);
      // The window starts at the 7th send, timed from the first (the line's origin). The 7th is due 6 gaps after the
      // first is due; a first send a few ms late on a shared box brings the 7th closer to it, so the sends are read.
      const sends = details.filter((d) => d.pct === l.shared_prefix_pct).sort((a, b) => a.start_epoch_ms - b.start_epoch_ms);
      expect(sends).toHaveLength(PROMPTS);
      expect(sends[6].intended_epoch_ms - sends[0].intended_epoch_ms).toBeCloseTo(6 * GAP_S * 1000, 2);
      expect(s.start_s).toBeCloseTo((sends[6].start_epoch_ms - sends[0].start_epoch_ms) / 1000, 6);
      expect(s.start_s).toBeGreaterThan(5 * GAP_S);
      expect(s.start_s).toBeLessThan(6 * GAP_S + 0.1);
      // The drain: the last 8 end one gap apart; the window ends at the second of them, ~6 gaps before the line's end.
      expect(s.end_s).toBeLessThan(l.benchmark_duration - 5 * GAP_S);
      expect(s.end_s).toBeGreaterThan(l.benchmark_duration - 7 * GAP_S - 0.1);
      expect(s.duration_s).toBeCloseTo(s.end_s - s.start_s, 9);
      expect(s.mean_in_flight).toBeGreaterThan(7.5);
      expect(s.mean_in_flight).toBeLessThanOrEqual(CAP);
      // Sent inside: all but the first 6 of the ramp (a late timer may push one more send into it).
      expect(s.requests).toBeGreaterThanOrEqual(PROMPTS - 6);
      expect(s.requests).toBeLessThanOrEqual(PROMPTS - 5);
      // Ramp and drain left out: more tokens per second inside the window than over the whole line.
      expect(s.output_throughput).toBeGreaterThan(l.output_throughput * 1.05);
      expect(s.mean_ttft_ms).toBeGreaterThan(0);
      expect(s.p99_ttft_ms).toBeGreaterThanOrEqual(s.mean_ttft_ms);
      expect(s.mean_itl_ms).toBeGreaterThan(20);
      // The timeline: every request and token once; 8 in flight on the plateau.
      const t = unpackTimeline(l.timeline);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      expect(t.started.length).toBeLessThanOrEqual(120);
      // The buckets run from the first send to the last end: past the window, within a bucket of the line's duration
      // (which starts when sending began, a few ms before the first send on a loaded box).
      expect(t.started.length * t.bucket_s).toBeGreaterThanOrEqual(s.end_s);
      expect(t.started.length * t.bucket_s).toBeGreaterThanOrEqual(l.benchmark_duration - t.bucket_s);
      expect(sum(t.started)).toBe(PROMPTS);
      expect(sum(t.finished)).toBe(PROMPTS);
      expect(sum(t.output_tokens)).toBe(l.total_output);
      const mid = Math.floor(t.in_flight.length / 2);
      expect(t.in_flight[mid]).toBeGreaterThanOrEqual(7.5);
      expect(Math.max(...t.in_flight)).toBeLessThanOrEqual(CAP);
      expect(t.cached_pct.filter((v: number | null) => v !== null).every((v: number) => v === (l.shared_prefix_pct === 0 ? 0 : 88))).toBe(true);
    }
  });

  test("the report draws the chosen line over time with its window shaded, and switches lines", async () => {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`file://${html}`);
    await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
    const read = () =>
      page.evaluate(() => {
        const all = (globalThis as any).warmbenchCharts as Record<string, any>;
        return ["timeline", "timeline-latency"].map((id) => ({
          y2: all[id].options.scales.y2?.position ?? null,
          datasets: all[id].data.datasets.map((d: any, i: number) => ({
            label: d.label,
            data: d.data,
            axis: d.yAxisID ?? "y",
            fill: d.fill ?? false,
            drawn: all[id].getDatasetMeta(i).data.length,
          })),
        }));
      });
    const check = async (l: any) => {
      const [tp, lat] = await read();
      const t = unpackTimeline(l.timeline);
      const mid = (k: number) => (k + 0.5) * t.bucket_s;
      expect(tp!.y2).toBe("right");
      const [tokens, inFlight, band] = tp!.datasets;
      expect(tokens.label).toBe("output tokens/s");
      expect(tokens.data).toEqual(t.output_tokens.map((n: number, k: number) => ({ x: mid(k), y: n / t.bucket_s })));
      expect(inFlight.axis).toBe("y2");
      expect(inFlight.data).toEqual(t.in_flight.map((n: number, k: number) => ({ x: mid(k), y: n })));
      // The band spans exactly the line's window.
      expect(band.label).toContain("steady state");
      expect(band.fill).toBe("origin");
      expect(band.data.map((p: any) => p.x)).toEqual([l.steady_state.start_s, l.steady_state.end_s]);
      const ttft = lat!.datasets.find((d: any) => d.label === "mean TTFT (ms)");
      expect(ttft.data).toEqual(t.ttft_ms.flatMap((v: number | null, k: number) => (v === null ? [] : [{ x: mid(k), y: v }])));
      expect(lat!.datasets.at(-1).data.map((p: any) => p.x)).toEqual([l.steady_state.start_s, l.steady_state.end_s]);
      for (const c of [tp!, lat!]) for (const d of c.datasets) expect(d.drawn).toBe(d.data.length);
    };
    await check(lines[0]);
    await page.selectOption("#select-timeline", "1");
    await page.selectOption("#select-timeline-latency", "1");
    await check(lines[1]);
    expect(problems).toEqual([]);
    // The window table: a row per line, its window beside the whole line's figures.
    const rows = await page.$$eval("#table-timeline tbody tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(["0% @ 40 req/s", "90% @ 40 req/s"]);
    expect(rows[1]![3]).toBe(String(lines[1].steady_state.requests));
    await page.close();
  });

  test("the Markdown holds the window table", () => {
    const md = readFileSync(join(dir, "phases.md"), "utf8");
    expect(md).toContain("### A line over time: throughput and requests in flight");
    const s = lines[1].steady_state;
    expect(md).toContain(`| 90% @ 40 req/s | ${s.start_s.toFixed(2)} | ${s.end_s.toFixed(2)} | ${s.requests} | ${PROMPTS} |`);
  });
});
