/**
 * Open-loop load (issue 10): how exactly warmbench keeps a request rate, how much memory it needs for many and
 * long prompts, and what latency from the intended send time shows that the script's TTFT hides.
 *
 * - pacing: Poisson arrivals at 200 and 2000 req/s against a mock process (2-token outputs); the rate achieved
 *   (warmbench's own figure, and as the mock received the requests) and the schedule lag (actual - intended send).
 * - memory: peak RSS with 4096 streams x 70k-token prompts at pct 0 (no shared prefix: every prompt unique), and
 *   with 1k/10k/100k prompts x 4k tokens, which is RSS against the number of prompts.
 * - coordinated omission: a mock that runs 4 requests at once behind a client with 4 slots, swept through rates
 *   below and above its capacity; TTFT from the send (the script's) against TTFT from the intended send time, per
 *   rate and, at the highest rate, per tenth of the run as the client's queue grows.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { parseTruth } from "../lib/join.ts";
import { readIfExists, runBounded, startMock, type ProcOutcome } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt, mean, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const GIB_MIB = 1024;

let runCounter = 0;

/** The fields of a --request-details line this scenario reads. */
interface Detail {
  requestId: string;
  index: number;
  ok: boolean;
  intendedEpochMs: number;
  startEpochMs: number;
  ttftMs: number;
}

function parseDetailLines(text: string): Detail[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const o = JSON.parse(l) as Record<string, unknown>;
      return {
        requestId: String(o.request_id),
        index: Number(o.index),
        ok: o.ok === true,
        intendedEpochMs: Number(o.intended_epoch_ms),
        startEpochMs: Number(o.start_epoch_ms),
        ttftMs: Number(o.ttft_ms),
      };
    });
}

/** One warmbench run against a fresh mock: its pct lines, details, truth and process figures. */
interface OpenLoopRun {
  lines: Array<Record<string, unknown>>;
  details: Detail[];
  /** Epoch ms at which the mock received each measured request (those with a request id). */
  receivedMs: number[];
  /** Most requests the mock had in flight at once. */
  mockMaxInFlight: number;
  proc: ProcOutcome;
  note: string;
}

async function openLoopRun(
  ctx: BenchContext,
  mockArgs: string[],
  clientArgs: string[],
  opts: { tokenizer: string; timeoutMs: number; fetchCap: number },
): Promise<OpenLoopRun> {
  const dir = mkdtempSync(join(ctx.workDir, `ol${++runCounter}-`));
  const truthPath = join(dir, "truth.jsonl");
  const out = join(dir, "results.jsonl");
  const detailsPath = join(dir, "details.jsonl");
  const mock = await startMock(ctx.bin, truthPath, ["--prefill-us-per-token", "0", "--incremental", ...mockArgs]);
  const cmd = [
    ctx.bin,
    "run",
    "--model",
    opts.tokenizer,
    "--base-url",
    mock.url,
    "--pcts",
    "0",
    "--settle",
    "0",
    "--output-file",
    out,
    "--request-details",
    detailsPath,
    ...clientArgs,
  ];
  // Set the fetch cap ourselves so warmbench does not re-exec: /proc and rusage then see the real client.
  const proc = await runBounded(cmd, { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: String(opts.fetchCap), NO_COLOR: "1" }, timeoutMs: opts.timeoutMs });
  let mockMaxInFlight = NaN;
  try {
    mockMaxInFlight = (await mock.stats()).maxInFlight;
  } catch {
    // a mock that died shows as NaN
  }
  await mock.stop();
  const details = parseDetailLines(readIfExists(detailsPath));
  const ids = new Set(details.map((d) => d.requestId));
  const receivedMs = parseTruth(readIfExists(truthPath))
    .filter((t) => t.requestId !== null && ids.has(t.requestId))
    .map((t) => t.receivedMs);
  const notes: string[] = [];
  if (proc.timedOut) notes.push(`client killed after ${(opts.timeoutMs / 1000).toFixed(0)} s`);
  else if (proc.code !== 0) notes.push(`client exit ${proc.code}: ${proc.stderrTail.trim().split("\n").pop()?.slice(0, 160) ?? ""}`);
  return { lines: readLines(out), details, receivedMs, mockMaxInFlight, proc, note: notes.join("; ") };
}

/** The pct lines of a results file (Python's bare Infinity read as null). */
function readLines(path: string): Array<Record<string, unknown>> {
  return readIfExists(path)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l.replace(/\b-?Infinity\b|\bNaN\b/g, "null")) as Record<string, unknown>);
}

/** Requests per second as the mock received them: (n - 1) over the span from the first to the last. */
function receivedRate(receivedMs: number[]): number {
  if (receivedMs.length < 2) return NaN;
  const sorted = [...receivedMs].sort((a, b) => a - b);
  return ((sorted.length - 1) * 1000) / (sorted.at(-1)! - sorted[0]!);
}

const peakMiB = (r: OpenLoopRun): number => Math.max(r.proc.sampler.hwmKb / 1024, r.proc.maxRssMiB);

// --- pacing -------------------------------------------------------------------------------------------------------

interface PacingRow {
  rate: number;
  requests: number;
  achieved: number;
  achievedAtMock: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  cpuPct: number;
  loopLagP99: number;
  run: OpenLoopRun;
}

async function pacing(ctx: BenchContext, rate: number, seconds: number): Promise<PacingRow> {
  const requests = Math.round(rate * seconds);
  progress(`open-loop pacing: ${requests} requests at ${rate} req/s (Poisson)`);
  const run = await openLoopRun(
    ctx,
    ["--itl-ms", "1", "--ttft-base-ms", "1", "--max-running", "4096"],
    ["--num-prompts", String(requests), "--max-concurrency", "512", "--total-tokens", "64", "--output-len", "2", "--request-rate", String(rate)],
    { tokenizer: ctx.tokenizers.llama2, timeoutMs: (seconds * 4 + 60) * 1000, fetchCap: 600 },
  );
  const line = run.lines[0] ?? {};
  const lags = run.details.map((d) => d.startEpochMs - d.intendedEpochMs);
  return {
    rate,
    requests,
    achieved: Number(line.achieved_request_rate),
    achievedAtMock: receivedRate(run.receivedMs),
    lagP50: Number(line.schedule_lag_median_ms),
    lagP99: Number(line.schedule_lag_p99_ms),
    lagMax: lags.length ? lags.reduce((m, x) => Math.max(m, x), -Infinity) : NaN,
    cpuPct: Number(line.client_cpu_pct),
    loopLagP99: Number(line.client_loop_lag_p99_ms),
    run,
  };
}

// --- memory -------------------------------------------------------------------------------------------------------

interface MemoryRow {
  label: string;
  prompts: number;
  promptTokens: number;
  concurrency: number;
  peakMiB: number;
  completed: number;
  wallS: number;
  note: string;
}

async function memory(ctx: BenchContext, label: string, prompts: number, promptTokens: number, concurrency: number, timeoutS: number): Promise<MemoryRow> {
  progress(`open-loop memory: ${prompts} prompts x ${promptTokens} tokens, pct 0, ${concurrency} in flight`);
  const run = await openLoopRun(
    ctx,
    ["--itl-ms", concurrency > 1000 ? "50" : "2", "--ttft-base-ms", "5", "--max-running", String(concurrency + 8)],
    [
      "--num-prompts",
      String(prompts),
      "--max-concurrency",
      String(concurrency),
      "--total-tokens",
      String(promptTokens),
      "--output-len",
      concurrency > 1000 ? "20" : "2",
      "--verify-cache",
      "off",
    ],
    { tokenizer: ctx.tokenizers.qwen3, timeoutMs: timeoutS * 1000, fetchCap: concurrency + 64 },
  );
  return {
    label,
    prompts,
    promptTokens,
    concurrency,
    peakMiB: peakMiB(run),
    completed: Number(run.lines[0]?.completed ?? 0),
    wallS: run.proc.wallMs / 1000,
    note: run.note,
  };
}

// --- coordinated omission -----------------------------------------------------------------------------------------

interface CoRow {
  rate: number;
  ttftP50: number;
  ttftP99: number;
  intendedP50: number;
  intendedP99: number;
  lagP99: number;
  achieved: number;
  throughput: number;
}

/** One sweep over rates below and above the mock's capacity (4 running, ~35 ms each: ~114 req/s). */
async function coordinatedOmission(ctx: BenchContext, rates: number[], perRate: number): Promise<{ rows: CoRow[]; deciles: string[][]; run: OpenLoopRun }> {
  progress(`open-loop coordinated omission: rates ${rates.join(", ")} req/s, ${perRate} requests each, 4 slots, mock runs 4`);
  const run = await openLoopRun(
    ctx,
    ["--itl-ms", "5", "--ttft-base-ms", "20", "--max-running", "4"],
    ["--num-prompts", String(perRate), "--max-concurrency", "4", "--total-tokens", "64", "--output-len", "4", "--request-rate", rates.join(",")],
    { tokenizer: ctx.tokenizers.llama2, timeoutMs: 300_000, fetchCap: 64 },
  );
  const rows = run.lines.map((l) => ({
    rate: Number(l.request_rate),
    ttftP50: Number(l.median_ttft_ms),
    ttftP99: Number(l.p99_ttft_ms),
    intendedP50: Number(l.ttft_from_intended_median_ms),
    intendedP99: Number(l.ttft_from_intended_p99_ms),
    lagP99: Number(l.schedule_lag_p99_ms),
    achieved: Number(l.achieved_request_rate),
    throughput: Number(l.request_throughput),
  }));
  // The highest rate, tenth by tenth of its requests (in send order): the queue grows, the script's TTFT does not.
  const top = Math.max(...rates);
  const topDetails = run.details.filter((d) => d.requestId.includes(`@${top}-`) && d.ok).sort((a, b) => a.index - b.index);
  const deciles: string[][] = [];
  for (let k = 0; k < 10 && topDetails.length >= 10; k++) {
    const part = topDetails.slice(Math.floor((k * topDetails.length) / 10), Math.floor(((k + 1) * topDetails.length) / 10));
    const fromSend = part.map((d) => d.ttftMs);
    const fromIntended = part.map((d) => d.ttftMs + d.startEpochMs - d.intendedEpochMs);
    deciles.push([`${k * 10}-${k * 10 + 10} %`, fmt(mean(fromSend), 1), fmt(mean(fromIntended), 1), fmt(percentile(fromIntended, 99), 1)]);
  }
  return { rows, deciles, run };
}

// --- the scenario -------------------------------------------------------------------------------------------------

export async function runOpenLoop(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const q = ctx.quick;
  const pace = [await pacing(ctx, 200, q ? 2 : 10), await pacing(ctx, 2000, q ? 1 : 5)];
  const big = q ? await memory(ctx, "streams", 256, 8000, 256, 120) : await memory(ctx, "streams", 4096, 70_000, 4096, 300);
  const perN: MemoryRow[] = [];
  for (const n of q ? [200, 2000] : [1000, 10_000, 100_000]) perN.push(await memory(ctx, "prompts", n, 4000, 64, q ? 120 : 400));
  const rates = q ? [60, 200] : [40, 80, 110, 140, 200];
  const co = await coordinatedOmission(ctx, rates, q ? 100 : 300);

  const rows: string[][] = [
    ...pace.map((p) => [
      "pacing",
      `${p.rate} req/s Poisson, ${p.requests} requests`,
      `achieved ${fmt(p.achieved, 1)} req/s (${fmt((p.achieved / p.rate - 1) * 100, 2)} %), at the mock ${fmt(p.achievedAtMock, 1)}`,
      `schedule lag p50 ${fmt(p.lagP50, 3)} / p99 ${fmt(p.lagP99, 3)} / max ${fmt(p.lagMax, 2)} ms`,
      `client CPU ${fmt(p.cpuPct, 0)} %, its event-loop lag p99 ${fmt(p.loopLagP99, 2)} ms; at most ${p.run.mockMaxInFlight} in flight (slots: 512)`,
      p.run.note,
    ]),
    ...[big, ...perN].map((m) => [
      "memory",
      `${m.prompts} prompts x ${m.promptTokens} tokens, pct 0, ${m.concurrency} in flight`,
      `peak RSS ${fmt(m.peakMiB, 0)} MiB`,
      `${m.completed} completed`,
      `${fmt(m.wallS, 1)} s`,
      m.note,
    ]),
  ];
  const bigPass = !q && big.note === "" && big.completed === 4096 ? big.peakMiB <= GIB_MIB : null;
  const hundredK = perN.find((m) => m.prompts === 100_000);
  const top = co.rows.at(-1);
  const low = co.rows[0];
  const lastDecile = co.deciles.at(-1);
  const firstDecile = co.deciles[0];
  const targets: TargetCheck[] = [
    ...pace.map((p) => ({
      target: `achieved rate within 1 % of ${p.rate} req/s${q ? " (quick)" : ""}`,
      measured: `${fmt(p.achieved, 1)} req/s (${fmt((p.achieved / p.rate - 1) * 100, 2)} %); mock saw ${fmt(p.achievedAtMock, 1)}`,
      pass: q || p.run.note !== "" ? null : Math.abs(p.achieved / p.rate - 1) <= 0.01,
    })),
    {
      target: "schedule_lag p99 <= 1 ms at 200 req/s",
      measured: `${fmt(pace[0]!.lagP99, 3)} ms`,
      pass: q || pace[0]!.run.note !== "" ? null : pace[0]!.lagP99 <= 1,
    },
    { target: `peak RSS <= 1 GiB, ${big.prompts} streams x ${big.promptTokens}-token prompts at pct 0`, measured: `${fmt(big.peakMiB, 0)} MiB`, pass: bigPass },
    {
      target: "peak RSS <= 1 GiB, 100k prompts x 4k tokens",
      measured: hundredK ? `${fmt(hundredK.peakMiB, 0)} MiB` : "not run (--quick)",
      pass: hundredK && hundredK.note === "" && hundredK.completed === 100_000 ? hundredK.peakMiB <= GIB_MIB : null,
    },
    {
      target: "over capacity, ttft_from_intended grows with the queue while the script's TTFT stays flat",
      measured:
        top && low && lastDecile && firstDecile
          ? `at ${top.rate} req/s: TTFT p99 ${fmt(top.ttftP99, 1)} ms from send vs ${fmt(top.intendedP99, 1)} ms from intended (at ${low.rate} req/s: ${fmt(low.ttftP99, 1)} vs ${fmt(low.intendedP99, 1)}); mean TTFT from intended ${firstDecile[2]} -> ${lastDecile[2]} ms over the run, from send ${firstDecile[1]} -> ${lastDecile[1]} ms`
          : "no data",
      pass:
        top && low && lastDecile && firstDecile
          ? top.intendedP99 > 3 * top.ttftP99 && Number(lastDecile[2]) > 3 * Number(firstDecile[2]) && Number(lastDecile[1]) < 1.5 * Number(firstDecile[1])
          : null,
    },
  ];
  return {
    name: "open-loop",
    title: "Open-loop load: pacing, memory against prompts, latency from the intended send time",
    columns: ["part", "setting", "figure", "figure", "figure", "note"],
    rows,
    targets,
    notes: [
      "Pacing: `--request-rate R` (Poisson, `--burstiness 1`), 64-token prompts, 2 output tokens, mock `--itl-ms 1 --ttft-base-ms 1`, `--max-concurrency 512` (the schedule lag also counts waits for a slot: 'at most N in flight' says whether the slots were ever full, i.e. the mock fell behind). The client's event-loop lag p99 (its own 10 ms probe timer, from the pct line) shows how late any timer of the client fired: the floor under the schedule lag on this box. 'achieved' is warmbench's `achieved_request_rate` (requests over the time from the start of sending to the last send; the schedule ends at N/R exactly, as vLLM's); 'at the mock' is (n - 1) over the span of the mock's receipt times. Schedule lag = actual send - intended send, from the pct line.",
      "Memory: peak RSS = max(VmHWM sampled every 100 ms, rusage maxrss) of the client process; pct 0 so every prompt is unique (the heaviest case). Prompts are drawn and serialized by a worker thread a bounded look-ahead (64 MiB, 4096 prompts) before they are sent, so RSS follows what is in flight: the rows at 1k, 10k and 100k prompts are RSS against the number of prompts.",
      "Coordinated omission: the mock runs at most 4 requests at once (`--max-running 4`, ~35 ms each, so ~114 req/s), warmbench keeps at most 4 in flight (`--max-concurrency 4`) and one `--request-rate` sweep sends each rate its own flushed, warmed line. Above capacity requests wait for a slot in the client: the script's TTFT (from the send) cannot see that wait, TTFT from the intended send time can.",
    ],
    trials: [],
    figures: {
      achievedAt200: pace[0]!.achieved,
      achievedAt2000: pace[1]!.achieved,
      lagP99At200Ms: pace[0]!.lagP99,
      rssStreamsMiB: big.peakMiB,
      rss100kMiB: hundredK?.peakMiB ?? null,
    },
    extraTables: [
      {
        title: "Open loop: TTFT from the send (the script's) and from the intended send time, per rate (mock capacity ~114 req/s)",
        columns: [
          "rate req/s",
          "achieved req/s",
          "throughput req/s",
          "TTFT p50 from send",
          "TTFT p99 from send",
          "TTFT p50 from intended",
          "TTFT p99 from intended",
          "schedule lag p99 ms",
        ],
        rows: co.rows.map((r) => [
          fmt(r.rate, 0),
          fmt(r.achieved, 1),
          fmt(r.throughput, 1),
          fmt(r.ttftP50, 1),
          fmt(r.ttftP99, 1),
          fmt(r.intendedP50, 1),
          fmt(r.intendedP99, 1),
          fmt(r.lagP99, 1),
        ]),
      },
      {
        title: `Open loop at ${Math.max(...rates)} req/s: TTFT (ms) per tenth of the run, in send order`,
        columns: ["requests", "mean TTFT from send", "mean TTFT from intended", "p99 TTFT from intended"],
        rows: co.deciles,
      },
    ],
    elapsedS: (performance.now() - t0) / 1000,
  };
}
