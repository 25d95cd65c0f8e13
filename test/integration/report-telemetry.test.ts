/**
 * The HTML report's telemetry panels, drawn by Chromium from a run over three mock replicas (--scrape-interval
 * 250ms): KV usage and requests waiting over time, one curve per replica, for every line that was scraped; and the
 * reconciliation, one bar and one table row per server and counter. With TELEMETRY_SCREENSHOT=PATH the panels are
 * saved there (docs/guides/telemetry.png is one).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { openReport } from "../helpers/report-page.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-telemetry-"));
const mocks: MockServer[] = [];
let browser: Browser | null = null;
afterAll(async () => {
  await browser?.close();
  await Promise.all(mocks.map((m) => m.stop()));
});

describe("the report's telemetry panels", () => {
  test("KV usage and queue over time per replica, and the reconciliation, drawn without a problem", async () => {
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
    browser = await openBrowser({ width: 1200, height: 900 });
    const { charts, problems, page } = await openReport(html, browser);
    expect(problems).toEqual([]);
    const over = charts.telemetry!;
    // Per replica: KV usage and requests waiting, each with points; the steady-state band.
    expect(over.datasets.filter((d) => d.label.startsWith("KV usage %")).map((d) => d.drawn > 0)).toEqual([true, true, true]);
    expect(over.datasets.filter((d) => d.label.startsWith("requests waiting"))).toHaveLength(3);
    const rec = charts["telemetry-reconciliation"]!;
    expect(rec.datasets[0]!.drawn).toBe(9);
    expect(rec.datasets[0]!.data.every((p: any) => p.y === 0)).toBe(true);
    const shot = process.env.TELEMETRY_SCREENSHOT;
    if (shot !== undefined && shot !== "") {
      const section = page.locator("article#section-telemetry");
      await section.screenshot({ path: shot });
    }
    await page.close();
  }, 60_000);
});
