/**
 * Makes docs/report.png: three sweeps of `dist/warmbench` against mocks that differ in one setting (the prefill cost,
 * as a shell loop over a server flag would), one `warmbench report --html`, and a headless-Chromium screenshot of it.
 *
 *   bun build.ts && bun docs/report-screenshot.ts [OUT.png]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openBrowser } from "../test/helpers/browser.ts";
import { startMockProcess } from "../test/helpers/mock-process.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../test/helpers/run-cli.ts";

const out = resolve(process.argv[2] ?? join(import.meta.dir, "report.png"));
const dir = mkdtempSync(join(tmpdir(), "warmbench-screenshot-"));
const files: string[] = [];
for (const prefillUs of [10, 20, 40]) {
  const mock = await startMockProcess(["--page-size", "16", "--ttft-base-ms", "5", "--prefill-us-per-token", String(prefillUs), "--itl-ms", "4"]);
  const file = join(dir, `prefill-${prefillUs}.jsonl`);
  const r = await runCli([
    "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", "0,10,20,30,40,50,60,70,80,90,95,99", "--num-prompts", "16",
    "--total-tokens", "4000", "--output-len", "32", "--max-concurrency", "4", "--settle", "0", "--quiet", "--output-file", file,
    "--gate", "p99_ttft_ms<=150", "--gate", "mean_itl_ms<5@pct>=90",
  ]);
  await mock.stop();
  process.stderr.write(`prefill ${prefillUs} µs/token: exit ${r.code}\n`);
  files.push(file);
}
const html = join(dir, "report.html");
const report = await runCli(["report", ...files, "--html", html]);
if (report.code !== 0) throw new Error(`${BINARY} report failed: ${report.stderr}`);
const browser = await openBrowser({ width: 1400, height: 900 });
try {
  const page = await browser.context.newPage();
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]");
  // The header and the first two rows of charts: what a reader sees first.
  const height = await page.evaluate(() => (globalThis as any).document.getElementById("section-itl-p99").getBoundingClientRect().top as number);
  await page.screenshot({ path: out, fullPage: true, clip: { x: 0, y: 0, width: 1400, height: Math.round(height) } });
} finally {
  await browser.close();
}
process.stderr.write(`wrote ${out} (report: ${html})\n`);
