/**
 * Makes docs/report-ledger.png, the picture of the replicas guide: one working-set sweep (6 prefixes of 1600 tokens,
 * 90 % shared) over three mock replicas whose caches hold three prefixes each, routed round-robin, by prefix and by
 * the oracle; `warmbench report` of the three files, its ledger section (where the hits went, per policy).
 *
 *   bun build.ts && bun docs/ledger-screenshot.ts [OUT_DIR]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openBrowser } from "../test/helpers/browser.ts";
import { startMockProcess } from "../test/helpers/mock-process.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../test/helpers/run-cli.ts";

const outDir = resolve(process.argv[2] ?? import.meta.dir);
const dir = mkdtempSync(join(tmpdir(), "warmbench-ledger-"));

async function routed(route: string): Promise<string> {
  const mocks = await Promise.all(
    [0, 1, 2].map(() =>
      startMockProcess(["--page-size", "16", "--ttft-base-ms", "5", "--itl-ms", "2", "--prefill-us-per-token", "20", "--cache-tokens", "5600"]),
    ),
  );
  const file = join(dir, `${route}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mocks.map((m) => m.url).join(","),
      "--route",
      route,
      "--pcts",
      "50,90",
      "--working-set",
      "6",
      "--num-prompts",
      "120",
      "--total-tokens",
      "2000",
      "--output-len",
      "8",
      "--max-concurrency",
      "6",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
    ]);
    process.stderr.write(`${route}: exit ${r.code}\n`);
  } finally {
    await Promise.all(mocks.map((m) => m.stop()));
  }
  return file;
}

const files = [];
for (const route of ["round-robin", "prefix", "oracle"]) files.push(await routed(route));
const html = join(dir, "ledger.html");
const r = await runCli(["report", ...files, "--html", html]);
if (r.code !== 0) throw new Error(`${BINARY} report failed: ${r.stderr}`);
const browser = await openBrowser({ width: 1400, height: 900 });
try {
  const page = await browser.context.newPage();
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]");
  await page.locator("#section-ledger").screenshot({ path: join(outDir, "report-ledger.png") });
} finally {
  await browser.close();
}
process.stderr.write(`wrote report-ledger.png under ${outDir} (reports: ${dir})\n`);
