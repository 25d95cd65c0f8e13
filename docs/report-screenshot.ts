/**
 * Makes the report's screenshots under docs/ from `dist/warmbench` runs against the mock, one per chart kind:
 * - report.png: three sweeps against mocks that differ in one setting (the prefill cost, as a shell loop over a
 *   server flag would), the page's header and first charts;
 * - report-loop.png: the same report's curve of TTFT against that setting (the loop's variable);
 * - report-load.png: a request-rate sweep's load curve (TTFT against the achieved rate);
 * - report-knee.png: a working-set sweep's knee (hit ratio against working_set_tokens, with the capacity lines);
 * - report-timeline.png: a line over time (throughput and requests in flight, its steady-state window shaded): a
 *   closed-loop run of 64 requests at --max-concurrency 8, so that the ramp, the plateau and the drain show;
 * - report-rounds.png: a multiturn file's round charts (hit ratio expected and observed, TTFT mean and P99).
 *
 *   bun build.ts && bun docs/report-screenshot.ts [OUT_DIR]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openBrowser } from "../test/helpers/browser.ts";
import { startMockProcess } from "../test/helpers/mock-process.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../test/helpers/run-cli.ts";

/** What the clips read of the page, in the browser (tsconfig has no DOM lib). */
interface BrowserWindow {
  document: { getElementById(id: string): { getBoundingClientRect(): { top: number; left: number; right: number; bottom: number } } };
  scrollY: number;
}

const outDir = resolve(process.argv[2] ?? import.meta.dir);
const dir = mkdtempSync(join(tmpdir(), "warmbench-screenshot-"));

/** One sweep against a fresh mock process; its results file. */
async function sweep(name: string, mockFlags: string[], args: string[]): Promise<string> {
  const mock = await startMockProcess(["--page-size", "16", "--ttft-base-ms", "5", "--itl-ms", "4", ...mockFlags]);
  const file = join(dir, `${name}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--output-len",
      "32",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
      ...args,
    ]);
    process.stderr.write(`${name}: exit ${r.code}\n`);
  } finally {
    await mock.stop();
  }
  return file;
}

/** A multiturn run against a fresh mock process; its results file. */
async function multiturn(name: string, args: string[]): Promise<string> {
  const mock = await startMockProcess(["--page-size", "16", "--ttft-base-ms", "5", "--itl-ms", "4", "--prefill-us-per-token", "40"]);
  const file = join(dir, `${name}.jsonl`);
  try {
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--output-len",
      "8",
      "--settle",
      "0",
      "--output-file",
      file,
      ...args,
    ]);
    process.stderr.write(`${name}: exit ${r.code}\n`);
  } finally {
    await mock.stop();
  }
  return file;
}

async function report(name: string, files: string[]): Promise<string> {
  const html = join(dir, `${name}.html`);
  const r = await runCli(["report", ...files, "--html", html]);
  if (r.code !== 0) throw new Error(`${BINARY} report failed: ${r.stderr}`);
  return html;
}

const loop: string[] = [];
for (const prefillUs of [10, 20, 40]) {
  loop.push(
    await sweep(
      `prefill-${prefillUs}`,
      ["--prefill-us-per-token", String(prefillUs)],
      [
        "--pcts",
        "0,10,20,30,40,50,60,70,80,90,95,99",
        "--num-prompts",
        "16",
        "--total-tokens",
        "4000",
        "--max-concurrency",
        "4",
        "--gate",
        "p99_ttft_ms<=150",
        "--gate",
        "mean_itl_ms<5@pct>=90",
      ],
    ),
  );
}
const loopHtml = await report("loop", loop);
const loadHtml = await report("load", [
  await sweep(
    "rates",
    ["--prefill-us-per-token", "20", "--serial-prefill"],
    ["--pcts", "0,50,90", "--num-prompts", "24", "--total-tokens", "4000", "--request-rate", "10,20,40,80", "--max-concurrency", "32"],
  ),
]);
const kneeHtml = await report("knee", [
  await sweep(
    "ws",
    ["--prefill-us-per-token", "20", "--cache-tokens", "20000", "--host-cache-tokens", "20000"],
    ["--pcts", "90", "--num-prompts", "32", "--total-tokens", "2000", "--max-concurrency", "1", "--working-set", "1,2,4,8,16,32,64"],
  ),
]);
const timelineHtml = await report("timeline", [
  await sweep("timeline", ["--prefill-us-per-token", "20"], ["--pcts", "90", "--num-prompts", "64", "--total-tokens", "2000", "--max-concurrency", "8"]),
]);
const roundsHtml = await report("rounds", [
  await multiturn("rounds", ["--num-clients", "4", "--num-rounds", "6", "--shared-system-tokens", "256", "--turn-tokens", "96"]),
]);

const browser = await openBrowser({ width: 1400, height: 900 });
try {
  const page = await browser.context.newPage();
  const open = async (html: string) => {
    await page.goto(`file://${html}`);
    await page.waitForSelector("html[data-charts-ready]");
  };
  await open(loopHtml);
  // The header and the first rows of charts: what a reader sees first.
  const height = await page.evaluate(() => (globalThis as unknown as BrowserWindow).document.getElementById("section-ttft-median").getBoundingClientRect().top);
  await page.screenshot({ path: join(outDir, "report.png"), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: Math.round(height) } });
  await page.locator("#section-loop-ttft").screenshot({ path: join(outDir, "report-loop.png") });
  await open(loadHtml);
  await page.locator("#section-rate-ttft").screenshot({ path: join(outDir, "report-load.png") });
  await open(kneeHtml);
  await page.locator("#section-ws-hit-ratio").screenshot({ path: join(outDir, "report-knee.png") });
  await open(timelineHtml);
  await page.locator("#section-timeline").screenshot({ path: join(outDir, "report-timeline.png") });
  await open(roundsHtml);
  // The two round charts side by side or one above the other, as the page lays them out: both sections in one clip.
  const box = await page.evaluate(() => {
    const { document: doc, scrollY } = globalThis as unknown as BrowserWindow;
    const a = doc.getElementById("section-round-hit-ratio").getBoundingClientRect(),
      b = doc.getElementById("section-round-ttft").getBoundingClientRect();
    const top = Math.min(a.top, b.top) + scrollY,
      left = Math.min(a.left, b.left);
    return { x: left, y: top, width: Math.max(a.right, b.right) - left, height: Math.max(a.bottom, b.bottom) + scrollY - top };
  });
  await page.screenshot({ path: join(outDir, "report-rounds.png"), fullPage: true, clip: box });
} finally {
  await browser.close();
}
process.stderr.write(
  `wrote report.png, report-loop.png, report-load.png, report-knee.png, report-timeline.png, report-rounds.png under ${outDir} (reports: ${dir})\n`,
);
