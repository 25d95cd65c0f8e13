/**
 * `warmbench report` picks its charts from what the runs vary, read in a real headless Chromium from the page's chart
 * objects: a rate sweep draws the load curve (latency against the achieved rate, throughput and goodput against the
 * offered one), a working-set sweep the knee with its capacity lines and evicting points (next to a multi-turn file's
 * round charts, in one report), three runs of a loop over one mock flag the key figures against that flag. Every
 * curve holds the JSONL's numbers; charts that do not apply are not drawn; the page fits a phone's width.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { openBrowser, type Browser } from "../helpers/browser.ts";
import { openReport, type DrawnChart } from "../helpers/report-page.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-report-axes-"));
let browser: Browser;
let phone: Browser;

/** One sweep against a fresh mock; its lines. */
async function sweep(name: string, mock: Partial<MockOptions>, args: string[]): Promise<{ file: string; lines: any[] }> {
  const server = await startMockServer(mockOptions({ port: 0, pageSize: 16, ttftBaseMs: 1, itlMs: 1, ...mock }));
  const file = join(dir, `${name}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--total-tokens",
      "1000",
      "--output-len",
      "3",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      file,
      ...args,
    ]);
    if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr}`);
  } finally {
    await server.stop();
  }
  return { file, lines: readSweepLines(file) };
}

const open = (html: string, b = browser) => openReport(html, b);

const byLabel = (c: DrawnChart, label: string) => {
  const d = c.datasets.find((x) => x.label === label);
  if (d === undefined) throw new Error(`no dataset ${label} in ${c.datasets.map((x) => x.label).join(" | ")}`);
  return d.data;
};
/** A number's table cell, as the report formats it (integers as they are, others with 2 decimals). */
const cell = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2));
/** The curve the lines make: (x, y) sorted by x. */
const curve = (lines: any[], x: (l: any) => number, y: string) => lines.map((l) => ({ x: x(l), y: l[y] })).sort((a, b) => a.x - b.x);

beforeAll(async () => {
  browser = await openBrowser();
  phone = await openBrowser({ width: 390, height: 844 });
});

afterAll(async () => {
  await browser?.close();
  await phone?.close();
});

describe("a rate sweep: the load curve", () => {
  const RATES = [10, 20, 40];
  let lines: any[];
  let html: string;
  beforeAll(async () => {
    const run = await sweep("rates", { prefillUsPerToken: 10 }, [
      "--pcts",
      "0,90",
      "--num-prompts",
      "8",
      "--request-rate",
      RATES.join(","),
      "--max-concurrency",
      "4",
    ]);
    lines = run.lines;
    html = join(dir, "rates.html");
    const r = await runCli(["report", run.file, "--html", html, "--md", join(dir, "rates.md")]);
    expect(r.code).toBe(0);
  });

  test("latency against the achieved rate and throughput against the offered one, one curve per pct", async () => {
    const { charts, problems, page } = await open(html);
    expect(problems).toEqual([]);
    for (const id of ["rate-ttft", "rate-ttft-intended", "rate-itl", "rate-e2e"])
      expect(charts[id]!.datasets.map((d) => d.label)).toEqual(["0% median", "0% p99", "90% median", "90% p99"]);
    for (const pct of [0, 90]) {
      const at = lines.filter((l) => l.shared_prefix_pct === pct);
      expect(at.map((l) => l.request_rate)).toEqual(RATES);
      expect(byLabel(charts["rate-ttft"]!, `${pct}% median`)).toEqual(curve(at, (l) => l.achieved_request_rate, "median_ttft_ms"));
      expect(byLabel(charts["rate-ttft-intended"]!, `${pct}% p99`)).toEqual(curve(at, (l) => l.achieved_request_rate, "ttft_from_intended_p99_ms"));
      expect(byLabel(charts["rate-e2e"]!, `${pct}% p99`)).toEqual(curve(at, (l) => l.achieved_request_rate, "p99_e2e_latency_ms"));
      expect(byLabel(charts["rate-throughput"]!, `${pct}%`)).toEqual(curve(at, (l) => l.request_rate, "output_throughput"));
      expect(byLabel(charts["rate-goodput"]!, `${pct}%`)).toEqual(curve(at, (l) => l.request_rate, "request_throughput"));
    }
    expect(byLabel(charts["rate-goodput"]!, "completed = offered")).toEqual([
      { x: 0, y: 0 },
      { x: 40, y: 40 },
    ]);
    // Two pcts: the pct charts still apply, one series per rate; no working-set or loop chart.
    expect(charts["ttft-mean"]!.datasets).toHaveLength(RATES.length);
    expect(Object.keys(charts).filter((id) => id.startsWith("ws-") || id.startsWith("loop-"))).toEqual([]);
    for (const c of Object.values(charts)) for (const d of c.datasets) expect(d.drawn).toBe(d.data.length);
    await page.close();
  });

  test("the Markdown holds the load curve's table, a row per line", () => {
    const md = readFileSync(join(dir, "rates.md"), "utf8");
    expect(md).toContain("### TTFT against the achieved request rate");
    const l = lines.find((x) => x.shared_prefix_pct === 90 && x.request_rate === 20);
    expect(md).toContain(`| 90% | ${cell(l.achieved_request_rate)} | ${cell(l.median_ttft_ms)} | ${cell(l.p99_ttft_ms)} |`);
  });
});

describe("a working-set sweep and a multi-turn file in one report: the knee and the rounds", () => {
  const DEVICE = 10_000;
  const HOST = 10_000;
  const LONG = `models/${"a-very-long-model-directory-name-".repeat(8)}final`;
  let lines: any[];
  let rounds: any[];
  let html: string;
  beforeAll(async () => {
    const run = await sweep("ws", { cacheTokens: DEVICE, hostCacheTokens: HOST, prefillUsPerToken: 20 }, [
      "--pcts",
      "90",
      "--num-prompts",
      "16",
      "--max-concurrency",
      "1",
      "--working-set",
      "2,4,8,16,32",
    ]);
    lines = run.lines;
    const mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, ttftBaseMs: 2, modelName: LONG }));
    const mt = join(dir, "multiturn.jsonl");
    try {
      const r = await runCli([
        "multiturn",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        mock.url,
        "--num-clients",
        "3",
        "--num-rounds",
        "3",
        "--shared-system-tokens",
        "64",
        "--turn-tokens",
        "48",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--output-file",
        mt,
      ]);
      if (r.code !== 0) throw new Error(`multiturn exited ${r.code}: ${r.stderr}`);
    } finally {
      await mock.stop();
    }
    rounds = readJsonl(mt);
    html = join(dir, "ws.html");
    const r = await runCli(["report", run.file, mt, "--html", html]);
    expect(r.code).toBe(0);
  });

  test("hit ratio and TTFT against working_set_tokens on a log axis, capacity lines, evicting points marked", async () => {
    const { charts, problems, page } = await open(html);
    expect(problems).toEqual([]);
    const evicting = lines.filter((l) => l.eviction === true);
    expect(evicting.length).toBeGreaterThan(0); // 32 x 900 tokens outgrow device and host together
    expect(lines.filter((l) => l.eviction === false).length).toBeGreaterThan(0);
    const hit = charts["ws-hit-ratio"]!;
    expect(hit.xType).toBe("logarithmic");
    expect(hit.datasets.map((d) => d.label)).toEqual([
      "90% observed",
      "90% expected",
      `device cache capacity (${DEVICE} tokens)`,
      `device + host capacity (${DEVICE + HOST} tokens)`,
      "evicting (eviction: true)",
    ]);
    const tokens = (l: any) => l.working_set_tokens;
    expect(byLabel(hit, "90% observed")).toEqual(curve(lines, tokens, "observed_hit_ratio"));
    expect(byLabel(hit, "90% expected")).toEqual(curve(lines, tokens, "expected_hit_ratio"));
    expect(byLabel(hit, `device cache capacity (${DEVICE} tokens)`).map((p) => p.x)).toEqual([DEVICE, DEVICE]);
    expect(byLabel(hit, `device + host capacity (${DEVICE + HOST} tokens)`).map((p) => p.x)).toEqual([DEVICE + HOST, DEVICE + HOST]);
    expect(byLabel(hit, "evicting (eviction: true)")).toEqual(curve(evicting, tokens, "observed_hit_ratio"));
    const ttft = charts["ws-ttft"]!;
    expect(byLabel(ttft, "90% mean")).toEqual(curve(lines, tokens, "mean_ttft_ms"));
    expect(byLabel(ttft, "evicting (eviction: true)")).toEqual(curve(evicting, tokens, "mean_ttft_ms"));
    // One pct: no pct curves of single dots, and no rate chart.
    expect(Object.keys(charts).filter((id) => id.startsWith("rate-") || id === "ttft-mean")).toEqual([]);
    // The multi-turn file's round charts, beside the knee.
    const byRound = (key: string) => rounds.map((l) => ({ x: l.round, y: l[key] }));
    expect(charts["round-hit-ratio"]!.datasets.map((d) => d.data)).toEqual([byRound("expected_hit_ratio"), byRound("observed_hit_ratio")]);
    expect(charts["round-ttft"]!.datasets).toHaveLength(2);
    expect(charts["round-tiers"]!.type).toBe("bar");
    for (const c of Object.values(charts)) for (const d of c.datasets) expect(d.drawn).toBe(d.data.length);
    // The long model path wraps in its cell at 1400 px instead of widening the table.
    const width = await page.evaluate((long: string) => {
      const cells = [...(globalThis as any).document.querySelectorAll("#table-differences td")] as any[];
      return cells.find((td) => td.textContent.includes(long))!.getBoundingClientRect().width as number;
    }, LONG);
    expect(width).toBeLessThan(32 * 12 + 20);
    await page.close();
  });

  test("at a phone's width the page is no wider than the window", async () => {
    const { problems, overflow, page } = await open(html, phone);
    expect(problems).toEqual([]);
    expect(overflow).toBeLessThanOrEqual(0);
    const widest = await page.evaluate(() =>
      Math.max(...[...(globalThis as any).document.querySelectorAll(".card")].map((c: any) => c.getBoundingClientRect().right as number)),
    );
    expect(widest).toBeLessThanOrEqual(390);
    await page.close();
  });
});

describe("three runs of a loop over one server flag: the loop's variable", () => {
  const PREFILL = [10, 20, 40];
  const PCTS = [0, 50, 90];
  const runs: Array<{ file: string; lines: any[] }> = [];
  let html: string;
  beforeAll(async () => {
    for (const us of PREFILL)
      runs.push(await sweep(`loop-${us}`, { prefillUsPerToken: us }, ["--pcts", PCTS.join(","), "--num-prompts", "6", "--max-concurrency", "3"]));
    html = join(dir, "loop.html");
    const r = await runCli(["report", ...runs.map((r) => r.file), "--html", html, "--md", join(dir, "loop.md")]);
    expect(r.code).toBe(0);
  });

  test("the key figures against the flag, one curve per pct through the three runs", async () => {
    const { charts, problems, page } = await open(html);
    expect(problems).toEqual([]);
    const ttft = charts["loop-ttft"]!;
    expect(ttft.datasets.map((d) => d.label)).toEqual(PCTS.flatMap((p) => [`${p}% mean`, `${p}% p99`]));
    expect(ttft.xType).toBe("linear"); // 10..40 spans less than 8x
    for (const [row, pct] of PCTS.entries()) {
      const at = runs.map((r, i) => ({ ...r.lines[row], us: PREFILL[i] }));
      expect(at.every((l) => l.shared_prefix_pct === pct)).toBe(true);
      expect(byLabel(ttft, `${pct}% mean`)).toEqual(curve(at, (l) => l.us, "mean_ttft_ms"));
      expect(byLabel(ttft, `${pct}% p99`)).toEqual(curve(at, (l) => l.us, "p99_ttft_ms"));
      expect(byLabel(charts["loop-throughput"]!, `${pct}%`)).toEqual(curve(at, (l) => l.us, "output_throughput"));
      expect(byLabel(charts["loop-itl"]!, `${pct}% p99`)).toEqual(curve(at, (l) => l.us, "p99_itl_ms"));
    }
    // At pct 0 the prefill cost is the whole prompt's: mean TTFT grows with the flag.
    const zero = byLabel(ttft, "0% mean").map((p) => p.y);
    expect(zero[2]!).toBeGreaterThan(zero[0]!);
    // The pct charts' series are the runs: the page's legend names them, not each chart.
    expect(charts["ttft-mean"]!.datasets).toHaveLength(3);
    expect(charts["ttft-mean"]!.legend).toBe(false);
    expect(ttft.legend).toBe(true);
    expect(await page.$$eval("#series li", (items: any[]) => items.map((li) => li.textContent))).toEqual(
      PREFILL.map((us) => `mock.prefill_us_per_token=${us}`),
    );
    expect(Object.keys(charts).filter((id) => id.startsWith("rate-") || id.startsWith("ws-"))).toEqual([]);
    for (const c of Object.values(charts)) for (const d of c.datasets) expect(d.drawn).toBe(d.data.length);
    await page.close();
  });

  test("the Markdown holds the loop's tables; a second differing setting means no loop chart", async () => {
    const md = readFileSync(join(dir, "loop.md"), "utf8");
    expect(md).toContain("### TTFT against mock.prefill_us_per_token");
    expect(md).toContain("| series | mock.prefill\\_us\\_per\\_token | mean\\_ttft\\_ms | p99\\_ttft\\_ms |");
    expect(md).toContain(`| 90% | 40 | ${cell(runs[2]!.lines[2].mean_ttft_ms)} | ${cell(runs[2]!.lines[2].p99_ttft_ms)} |`);
    const other = await sweep("loop-other", { prefillUsPerToken: 10, itlMs: 3 }, ["--pcts", PCTS.join(","), "--num-prompts", "6", "--max-concurrency", "3"]);
    const r = await runCli(["report", runs[1]!.file, runs[2]!.file, other.file, "--md", "-"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("### TTFT against mock");
    expect(r.stdout).not.toContain("against mock.itl_ms");
    expect(r.stdout).toContain("### Mean TTFT");
  });
});
