/**
 * An agentic replay's HTML report, read in headless Chromium: the eight real WEKA traces (test/fixtures/agentic, the
 * same files as the shared corpus) replayed by the compiled binary against the mock started as a process at
 * --time-scale 0.05 with --request-details, then `warmbench report --html`. The swim lane draws one row per session
 * and one bar per request of the details file, each at its send and end; two requests of one trace from different
 * chains overlap in time on different sub-rows (the subagents ran at once); the JCT CDF and the hit-vs-ceiling points
 * agree with the line's jct_ms and session_hit_ratio; the page logs no error. The lane's screenshot is taken into a
 * temporary directory every run, and into docs/guides/agentic-swimlane.png with WARMBENCH_WRITE_SCREENSHOTS=1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { openReport, type DrawnChart } from "../helpers/report-page.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, ROOT, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-agentic-"));
const SHOT = join(dir, "agentic-swimlane.png");

interface DrawnBar {
  row: number;
  slot: number;
  fromS: number;
  toS: number;
  hit: number | null;
  chain: string;
  turn: number;
  x0: number;
  x1: number;
  y: number;
  colour: string;
}
interface DrawnLanes {
  rows: { label: string; slots: number; top: number; height: number }[];
  bars: DrawnBar[];
  height: number;
}

let mock: MockProcess;
let browser: Browser;
let line: any;
let details: any[];
let lanes: DrawnLanes;
let charts: Record<string, DrawnChart>;
let problems: string[];

beforeAll(async () => {
  mock = await startMockProcess([
    "--context-length",
    "1000000",
    "--cache-tokens",
    "100000000",
    "--itl-ms",
    "0",
    "--ttft-base-ms",
    "1",
    "--prefill-us-per-token",
    "0.01",
  ]);
  const out = join(dir, "agentic.jsonl");
  const requests = join(dir, "requests.jsonl");
  const r = await runCli(
    [
      "replay",
      join(ROOT, "test/fixtures/agentic"),
      "--trace-format",
      "weka",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--settle",
      "0",
      "--time-scale",
      "0.05",
      "--max-idle",
      "1",
      "--quiet",
      "--output-file",
      out,
      "--request-details",
      requests,
    ],
    { timeoutMs: 120_000 },
  );
  if (r.code !== 0) throw new Error(`replay exited ${r.code}: ${r.stderr}`);
  line = readJsonl(out, { validate: true })[0];
  details = readJsonl(requests);
  const html = join(dir, "agentic.html");
  const rep = await runCli(["report", out, "--html", html]);
  if (rep.code !== 0) throw new Error(`report exited ${rep.code}: ${rep.stderr}`);
  browser = await openBrowser();
  const opened = await openReport(html, browser);
  charts = opened.charts;
  problems = opened.problems;
  lanes = await opened.page.evaluate(() => Object.values((globalThis as any).warmbenchLanes)[0]);
  const card = await opened.page.$("#section-agentic-lanes-0");
  await card.screenshot({ path: SHOT });
  if (process.env.WARMBENCH_WRITE_SCREENSHOTS === "1") copyFileSync(SHOT, join(ROOT, "docs/guides/agentic-swimlane.png"));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await mock?.stop();
});

describe("the swim lane of eight WEKA sessions", () => {
  test("one row per session, one bar per request at its send and end (seconds from the first send)", () => {
    const sessions = [...new Set(details.map((d) => d.session as number))].sort((a, b) => a - b);
    expect(sessions).toHaveLength(line.agentic.sessions);
    expect(lanes.rows.map((r) => r.label)).toEqual(sessions.map((s) => `#${s} ${details.find((d) => d.session === s).trace_id}`));
    expect(lanes.bars).toHaveLength(details.length);
    const t0 = Math.min(...details.map((d) => d.start_epoch_ms));
    for (const d of details) {
      const row = sessions.indexOf(d.session);
      const bar = lanes.bars.find((b) => b.row === row && b.chain === d.agent_path && b.turn === d.turn);
      expect(bar, d.request_id).toBeDefined();
      expect(bar!.fromS).toBeCloseTo((d.start_epoch_ms - t0) / 1000, 2);
      expect(bar!.toS).toBeCloseTo((d.start_epoch_ms + d.latency_ms - t0) / 1000, 2);
      expect(bar!.hit).toBeCloseTo(d.cached_tokens / d.prompt_len, 2);
      // Drawn inside its row, left to right in time.
      const r = lanes.rows[row]!;
      expect(bar!.y).toBeGreaterThanOrEqual(r.top);
      expect(bar!.y).toBeLessThan(r.top + r.height);
      expect(bar!.x1).toBeGreaterThan(bar!.x0);
    }
    // A cold first turn and a warm later one are told apart by colour.
    const cold = lanes.bars.find((b) => b.hit === 0)!;
    const warm = lanes.bars.find((b) => b.hit !== null && b.hit > 0.9)!;
    expect(cold.colour).not.toBe(warm.colour);
    expect(problems).toEqual([]);
  });

  test("subagents of one session drawn at once: two chains overlap in time, on different sub-rows", () => {
    const overlapping = lanes.bars.filter((a) =>
      lanes.bars.some((b) => a.row === b.row && a.chain !== b.chain && a.fromS < b.toS && b.fromS < a.toS && a.slot !== b.slot && a.x0 < b.x1 && b.x0 < a.x1),
    );
    expect(overlapping.length).toBeGreaterThanOrEqual(2);
    const traces = new Set(overlapping.map((b) => lanes.rows[b.row]!.label.split(" ")[1]));
    expect([...traces].some((t) => t === "trace_0277" || t === "trace_0291")).toBe(true);
    // The rows with subagents are the taller ones.
    const tall = lanes.rows.filter((r) => r.slots > 1).map((r) => r.label.split(" ")[1]);
    expect(tall.sort()).toEqual(["trace_0277", "trace_0291"]);
  });

  test("the JCT CDF and the hit-vs-ceiling points agree with the line's session metrics", () => {
    const jct = charts["agentic-jct"]!.datasets[0]!.data;
    expect(jct).toHaveLength(line.agentic.sessions);
    expect(jct.at(-1)!.y).toBe(1);
    expect(jct.at(-1)!.x).toBeCloseTo(line.agentic.jct_ms.max / 1000, 2);
    const hit = charts["agentic-hit"]!.datasets[0]!.data;
    expect(hit).toHaveLength(line.agentic.sessions);
    expect(hit.reduce((a, p) => a + p.y, 0) / hit.length).toBeCloseTo(line.agentic.session_hit_ratio.mean, 6);
    expect(hit.reduce((a, p) => a + p.x, 0) / hit.length).toBeCloseTo(line.agentic.session_ceiling_hit_ratio.mean, 6);
    const ttft = charts["agentic-ttft"]!.datasets[0]!;
    expect(ttft.drawn).toBe(details.filter((d) => d.ok).length);
  });

  test("the lane's screenshot is a PNG as tall as its rows", () => {
    const png = readFileSync(SHOT);
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    const height = png.readUInt32BE(20);
    expect(height).toBeGreaterThan(lanes.height);
  });
});
