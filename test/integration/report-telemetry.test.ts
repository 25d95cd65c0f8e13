/**
 * The HTML report's telemetry panels, drawn by Chromium from a run over three mock replicas (--scrape-interval
 * 250ms): one panel per replica, in the order of --base-url, each its own canvas drawn with KV usage and requests
 * running and waiting over time and the steady-state window shaded; and the reconciliation, one bar and one table row
 * per server and counter, each row the line's server_reconciliation figures. With TELEMETRY_SCREENSHOT=PATH the
 * panels and the reconciliation are saved there (docs/guides/telemetry.png is one).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { openReport } from "../helpers/report-page.ts";
import { unpackReplicaSeries } from "../../src/metrics/telemetry-series.ts";
import { readSweepLines } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-telemetry-"));
const mocks: MockServer[] = [];
let browser: Browser | null = null;
afterAll(async () => {
  await browser?.close();
  await Promise.all(mocks.map((m) => m.stop()));
});

describe("the report's telemetry panels", () => {
  test("one panel per replica: KV usage, running and waiting over time; the reconciliation table, every row agreeing", async () => {
    for (let i = 0; i < 3; i++) {
      const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 15, cacheTokens: 1500, maxRunning: 2, vocabSize: 32000 }));
      mocks.push(m);
    }
    const out = join(dir, "run.jsonl");
    const r = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mocks.map((m) => m.url).join(","),
      "--route",
      "prefix",
      "--num-prompts",
      "36",
      "--total-tokens",
      "300",
      "--output-len",
      "24",
      "--pcts",
      "50",
      "--working-set",
      "3",
      "--max-concurrency",
      "9",
      "--settle",
      "0",
      "--scrape-interval",
      "250ms",
      "--quiet",
      "--output-file",
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const html = join(dir, "report.html");
    const rep = await runCli(["report", out, "--html", html]);
    expect(rep.code, rep.stderr).toBe(0);
    const [line] = readSweepLines(out);
    browser = await openBrowser({ width: 1400, height: 900 });
    const { charts, problems, page } = await openReport(html, browser);
    expect(problems).toEqual([]);
    // One panel per replica, in --base-url order: its own card and canvas, titled with its server.
    const panels: { id: string; canvas: string; canvases: number; title: string; painted: number }[] = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll("article[id^='section-telemetry-replica-']")].map((a: any) => {
        const canvas = a.querySelector("canvas");
        const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
        return { id: a.id, canvas: canvas.id, canvases: a.querySelectorAll("canvas").length, title: a.querySelector("h2").textContent, painted };
      }),
    );
    expect(panels.map((p) => [p.id, p.canvas, p.canvases])).toEqual(
      [1, 2, 3].map((k) => [`section-telemetry-replica-${k}`, `chart-telemetry-replica-${k}`, 1]),
    );
    expect(charts.telemetry).toBeUndefined();
    for (const [k, p] of panels.entries()) {
      expect(p.title).toBe(`Replica ${k + 1} over time: KV usage, requests running and waiting (${mocks[k]!.url})`);
      expect(p.painted).toBeGreaterThan(5000);
      // KV usage, running and waiting each with points where the scrapes fell; the steady-state band.
      const panel = charts[`telemetry-replica-${k + 1}`]!;
      expect(panel.datasets.map((d) => d.label)).toEqual(["KV usage %", "requests running", "requests waiting", "steady state (>= 80 % of peak in flight)"]);
      for (const d of panel.datasets) expect(d.drawn, d.label).toBeGreaterThan(0);
      const kv = line.server_telemetry.replicas[k];
      expect(kv.url).toBe(mocks[k]!.url);
      // This replica's own series, not another's: each curve's points are its scrapes' buckets, in order.
      const own = unpackReplicaSeries(kv);
      const ys = (v: (number | null)[]) => v.filter((y): y is number => y !== null);
      expect(panel.datasets.slice(0, 3).map((d) => d.data.map((p) => p.y))).toEqual([ys(own.kv_usage_pct), ys(own.running), ys(own.waiting)]);
      expect(panel.datasets[0]!.data.length).toBeGreaterThanOrEqual(3);
      // Its table: the line's scrapes of this replica (the server is in the title).
      const scrapes = await page.evaluate(
        (id: string) => [...(globalThis as any).document.querySelectorAll(`#table-${id} tbody td`)].map((td: any) => td.textContent as string),
        `telemetry-replica-${k + 1}`,
      );
      expect(scrapes.slice(0, 4)).toEqual([
        "50% ws=3",
        kv.dialect,
        String(kv.scrapes_ok),
        `${line.server_telemetry.scrapes_ok}/${line.server_telemetry.scrapes_intended}`,
      ]);
    }
    // The reconciliation table: one row per replica and counter (at least prompt tokens, cached tokens and requests
    // for each of the three; a server labelling its cache by tier adds a row per tier), the line's two figures, "yes".
    const rows: string[][] = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll("#table-telemetry-reconciliation tbody tr")].map((tr: any) =>
        [...tr.querySelectorAll("td")].map((td: any) => td.textContent as string),
      ),
    );
    const want = line.server_reconciliation as Array<{ url: string; counter: string; server: number; client: number; agrees: boolean }>;
    for (const m of mocks)
      expect(want.filter((r) => r.url === m.url).map((r) => r.counter)).toEqual(expect.arrayContaining(["prompt_tokens", "cached_tokens", "requests"]));
    expect(new Set(want.map((r) => r.url))).toEqual(new Set(mocks.map((m) => m.url)));
    expect(rows).toEqual(want.map((r) => ["50% ws=3", r.url, r.counter, String(r.server), String(r.client), "yes"]));
    // One bar per row, each at 0 % (the figures agree).
    const rec = charts["telemetry-reconciliation"]!;
    expect(rec.datasets[0]!.drawn).toBe(want.length);
    expect(rec.datasets[0]!.data.every((p: any) => p.y === 0)).toBe(true);
    for (const r of want) expect([r.server, r.agrees]).toEqual([r.client, true]);
    const shot = process.env.TELEMETRY_SCREENSHOT;
    if (shot !== undefined && shot !== "") {
      // The three panels and the reconciliation (chart and table), as one picture: the page's other cards are set
      // aside first, so the four sit two by two whatever comes before them.
      const boxes: { x: number; y: number; right: number; bottom: number }[] = await page.evaluate(() => {
        const { document, scrollX, scrollY } = globalThis as any;
        for (const a of document.querySelectorAll("main > article:not([id^='section-telemetry'])")) a.style.display = "none";
        return [...document.querySelectorAll("article[id^='section-telemetry']")].map((a: any) => {
          const b = a.getBoundingClientRect();
          return { x: b.left + scrollX, y: b.top + scrollY, right: b.right + scrollX, bottom: b.bottom + scrollY };
        });
      });
      const x = Math.min(...boxes.map((b) => b.x)) - 8;
      const y = Math.min(...boxes.map((b) => b.y)) - 8;
      const clip = { x, y, width: Math.max(...boxes.map((b) => b.right)) + 8 - x, height: Math.max(...boxes.map((b) => b.bottom)) + 8 - y };
      await page.screenshot({ path: shot, fullPage: true, clip });
    }
    await page.close();
  }, 60_000);
});
