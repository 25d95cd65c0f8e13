/**
 * Makes the trace replay's screenshots under docs/ from a `dist/warmbench replay` run against a mock process whose
 * cache is smaller than the trace's working set, so the observed hit ratio falls below the expected one where
 * eviction takes hits:
 * - report-replay.png: hit ratio, observed and expected, over trace time (the window lines);
 * - report-replay-ttft.png: TTFT against the cached fraction of the prompt (the whole replay's line).
 *
 *   bun build.ts && bun docs/replay-screenshot.ts [OUT_DIR]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openBrowser } from "../test/helpers/browser.ts";
import { startMockProcess } from "../test/helpers/mock-process.ts";
import { generateTrace, traceText } from "../test/helpers/mooncake-trace.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../test/helpers/run-cli.ts";

const outDir = resolve(process.argv[2] ?? import.meta.dir);
const dir = mkdtempSync(join(tmpdir(), "warmbench-replay-screenshot-"));
const trace = join(dir, "trace.jsonl");
writeFileSync(
  trace,
  traceText(
    generateTrace({
      blockSize: 64,
      systems: 4,
      systemBlocks: 8,
      conversations: 120,
      turns: 5,
      maxTurnTokens: 400,
      turnGapMs: 8000,
      startGapMs: 500,
      outputLength: 16,
      seed: 22,
    }),
  ),
);
const results = join(dir, "replay.jsonl");
const mock = await startMockProcess(["--page-size", "16", "--ttft-base-ms", "5", "--itl-ms", "2", "--prefill-us-per-token", "40", "--cache-tokens", "40000"]);
try {
  const r = await runCli([
    "replay",
    trace,
    "--block-size",
    "64",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--settle",
    "0",
    "--window",
    "5",
    "--time-scale",
    "0.5",
    "--quiet",
    "--output-file",
    results,
  ]);
  process.stderr.write(`replay: exit ${r.code}\n`);
} finally {
  await mock.stop();
}
const html = join(dir, "replay.html");
const r = await runCli(["report", results, "--html", html]);
if (r.code !== 0) throw new Error(`${BINARY} report failed: ${r.stderr}`);

const browser = await openBrowser({ width: 1400, height: 900 });
try {
  const page = await browser.context.newPage();
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]");
  await page.locator("#section-window-hit-ratio").screenshot({ path: join(outDir, "report-replay.png") });
  await page.locator("#section-cached-fraction-ttft").screenshot({ path: join(outDir, "report-replay-ttft.png") });
} finally {
  await browser.close();
}
process.stderr.write(`wrote report-replay.png, report-replay-ttft.png under ${outDir} (report: ${html})\n`);
