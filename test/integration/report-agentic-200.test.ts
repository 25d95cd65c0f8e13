/**
 * The agentic swim lane with 200 sessions (issue 38: readable for 8 and for 200 sessions): a synthetic WEKA corpus of
 * 200 small sessions (three or four calls of a few 64-token pages each, every tenth with a subagent, the first with
 * two at once, so some rows are taller) is replayed by the compiled binary against the mock at --time-scale 0.02,
 * then `warmbench report --html` is opened in Chromium. Every one of the 200 session rows is drawn inside the lane's canvas, which grows to hold them; each
 * sub-row is at least MIN_SLOT_PX CSS px tall and rows never overlap; every row's bars are painted in its own band;
 * the labels drawn are at least a line of text apart (never overlapping), and no more than two rows in a row go
 * unnamed.
 *
 * MIN_SLOT_PX = 4: a bar is a sub-row less one pixel, so 3 CSS px of colour (the hit ratio) with a pixel of page
 * between neighbours - the least at which a row's colour can be told from the next one's. 200 sessions at 4 px a
 * sub-row and 2 px between rows make a canvas of about 1,300 px: one scroll of the page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { openReport } from "../helpers/report-page.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-agentic-200-"));
const SESSIONS = 200;
const MIN_SLOT_PX = 4;
/** The lane's label font is 11 px: two labels' centres closer than this would overlap. */
const LABEL_TEXT_PX = 11;

/** 200 WEKA records, one a line: calls a second apart (recorded), hash ids of their own, every tenth a subagent. */
function corpus(): string {
  const records: string[] = [];
  for (let s = 0; s < SESSIONS; s++) {
    const calls = 3 + (s % 2);
    const requests: Record<string, unknown>[] = Array.from({ length: calls }, (_, i) => ({
      t: i,
      type: "n",
      in: 64 * (i + 1),
      out: 4,
      hash_ids: Array.from({ length: i + 1 }, (_, k) => s * 100 + k + 1),
      api_time: 0.2,
    }));
    // The first session's two subagents run at once: a row three sub-rows tall above 199 thinner ones.
    const subagents = s === 0 ? 2 : s % 10 === 0 ? 1 : 0;
    for (let a = 0; a < subagents; a++)
      requests.splice(1, 0, {
        type: "subagent",
        agent_id: `a${s}-${a}`,
        t: 1.5,
        duration_ms: 1000,
        requests: [{ t: 0, type: "n", in: 64, out: 4, hash_ids: [s * 100 + 50 + a], api_time: 0.2 }],
      });
    records.push(JSON.stringify({ id: `syn_${String(s).padStart(3, "0")}`, block_size: 64, hash_id_scope: "local", requests }));
  }
  return `${records.join("\n")}\n`;
}

interface Layout {
  rows: { label: string; slots: number; top: number; height: number; labelY: number | null }[];
  bars: { row: number; slot: number; x0: number; x1: number; y: number }[];
  width: number;
  height: number;
  slot: number;
}

let mock: MockProcess;
let browser: Browser;
let details: any[];
let lanes: Layout;
let canvasBox: { width: number; height: number };
/** Per row: how many of its bars show their colour at their middle on the canvas. */
let painted: number[];
let problems: string[];

beforeAll(async () => {
  mock = await startMockProcess(["--itl-ms", "0", "--ttft-base-ms", "1", "--prefill-us-per-token", "0.01"]);
  const trace = join(dir, "traces.jsonl");
  writeFileSync(trace, corpus());
  const out = join(dir, "agentic.jsonl");
  const requests = join(dir, "requests.jsonl");
  const r = await runCli(
    [
      "replay",
      trace,
      "--trace-format",
      "weka",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--sessions",
      String(SESSIONS),
      "--settle",
      "0",
      "--time-scale",
      "0.02",
      "--quiet",
      "--output-file",
      out,
      "--request-details",
      requests,
    ],
    { timeoutMs: 60_000 },
  );
  if (r.code !== 0) throw new Error(`replay exited ${r.code}: ${r.stderr}`);
  details = readJsonl(requests);
  const html = join(dir, "agentic.html");
  const rep = await runCli(["report", out, "--html", html]);
  if (rep.code !== 0) throw new Error(`report exited ${rep.code}: ${rep.stderr}`);
  browser = await openBrowser();
  const opened = await openReport(html, browser);
  problems = opened.problems;
  const seen = await opened.page.evaluate(() => {
    const { document, warmbenchLanes } = globalThis as any;
    const layout = Object.values(warmbenchLanes)[0] as any;
    const canvas = document.querySelector("canvas[id^='lanes-']");
    const box = canvas.getBoundingClientRect();
    const ratio = canvas.width / box.width;
    const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
    // A bar shows its colour at its middle: the pixel there is the bar's colour, not the row's shading or white.
    const at = (x: number, y: number) => {
      const i = (Math.floor(y * ratio) * canvas.width + Math.floor(x * ratio)) * 4;
      return `rgb(${pixels.data[i]},${pixels.data[i + 1]},${pixels.data[i + 2]})`;
    };
    const hex = (c: string) => {
      if (c.startsWith("rgb")) return c.replace(/\s/g, "");
      const n = Number.parseInt(c.slice(1), 16);
      return `rgb(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255})`;
    };
    const painted = layout.rows.map(() => 0);
    for (const b of layout.bars) if (at((b.x0 + b.x1) / 2, b.y + (layout.slot - 1) / 2) === hex(b.colour)) painted[b.row]++;
    return { layout, box: { width: box.width, height: box.height }, painted };
  });
  lanes = seen.layout;
  canvasBox = seen.box;
  painted = seen.painted;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await mock?.stop();
});

describe("the swim lane of 200 sessions", () => {
  test("every session a row inside the canvas, which grows to hold them, each sub-row at least 4 CSS px", () => {
    expect(problems).toEqual([]);
    const sessions = [...new Set(details.map((d) => d.session as number))];
    expect(sessions).toHaveLength(SESSIONS);
    expect(lanes.rows).toHaveLength(SESSIONS);
    expect(lanes.rows.filter((r) => r.slots > 1).length).toBeGreaterThanOrEqual(SESSIONS / 10);
    expect(lanes.rows[0]!.slots).toBe(3);
    expect(canvasBox.height).toBe(lanes.height);
    for (const [i, r] of lanes.rows.entries()) {
      expect(r.height, r.label).toBeGreaterThanOrEqual(MIN_SLOT_PX * r.slots);
      expect(r.top, r.label).toBeGreaterThan(0);
      expect(r.top + r.height, r.label).toBeLessThanOrEqual(lanes.height);
      // Apart from the next row: one session's bars never touch another's.
      const next = lanes.rows[i + 1];
      if (next !== undefined) expect(next.top, r.label).toBeGreaterThanOrEqual(r.top + r.height + 1);
    }
    expect(lanes.slot).toBeGreaterThanOrEqual(MIN_SLOT_PX);
  });

  test("every request a bar in its own row's band, painted on the canvas; every row shows its bars", () => {
    expect(lanes.bars).toHaveLength(details.length);
    for (const b of lanes.bars) {
      const r = lanes.rows[b.row]!;
      expect(b.y).toBeGreaterThanOrEqual(r.top);
      expect(b.y + lanes.slot - 1).toBeLessThanOrEqual(r.top + r.height);
      expect(b.x0).toBeGreaterThanOrEqual(0);
      expect(b.x1).toBeLessThanOrEqual(lanes.width);
    }
    const bars = lanes.rows.map((_, i) => lanes.bars.filter((b) => b.row === i).length);
    expect(Math.min(...bars)).toBeGreaterThanOrEqual(3);
    // A bar drawn over by a later one of the same chain can hide its middle; most show it, in every row.
    for (const [i, n] of painted.entries()) expect(n, lanes.rows[i]!.label).toBeGreaterThanOrEqual(Math.ceil(bars[i]! / 2));
  });

  test("labels a line of text apart, never overlapping, and at most two rows in a row unnamed", () => {
    const labelled = lanes.rows.flatMap((r, i) => (r.labelY === null ? [] : [{ i, y: r.labelY }]));
    expect(labelled[0]!.i).toBe(0);
    for (let k = 1; k < labelled.length; k++) {
      expect(labelled[k]!.y - labelled[k - 1]!.y).toBeGreaterThanOrEqual(LABEL_TEXT_PX);
      expect(labelled[k]!.i - labelled[k - 1]!.i).toBeLessThanOrEqual(3);
    }
    expect(lanes.rows.length - 1 - labelled.at(-1)!.i).toBeLessThanOrEqual(2);
    // Each label inside its own row's band.
    for (const { i, y } of labelled) {
      const r = lanes.rows[i]!;
      expect(y).toBeGreaterThan(r.top);
      expect(y).toBeLessThan(r.top + r.height);
    }
  });
});
