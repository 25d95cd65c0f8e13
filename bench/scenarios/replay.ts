/**
 * Trace replay at scale (issue 22): `warmbench replay` on a generated Mooncake-format trace of 10 000 requests
 * (512-token blocks: shared system prompts, four-turn conversations, ties at one timestamp) against a mock process
 * with a cache larger than the trace. What it measures: the achieved schedule (lag p50/p99 of the sends against the
 * scaled timestamps, the client's own schedule_lag figures), the client's peak RSS with prompts built just in time,
 * and how many requests reported cached tokens outside their predicted range (0 expected: the cache holds everything).
 * Also, in this process: how long building one 100k-token prompt takes on the JS thread (all its blocks new, and
 * all already kept), the work a prompt worker thread would take off it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateTrace, traceText } from "../../test/helpers/mooncake-trace.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";
import { createTemplate, IDS_PLACEHOLDER } from "../../src/backends/body.ts";
import { BlockSource } from "../../src/replay/blocks.ts";
import { TraceSource } from "../../src/replay/source.ts";

const BLOCK = 512;
const TIME_SCALE = 0.25;
const LONG_PROMPT = 100_000;

/** Median ms to build a LONG_PROMPT-token prompt's digits with BlockSource, its blocks new (drawn) or kept (reused). */
function promptBuildMs(): { fresh: number; kept: number } {
  // A vocabulary-sized population: the cost is per id drawn and serialized, not which ids.
  const population = Uint32Array.from({ length: 32_000 }, (_, i) => i + 100);
  const blocks = Math.ceil(LONG_PROMPT / BLOCK);
  const fresh: number[] = [];
  const kept: number[] = [];
  for (let rep = 0; rep < 7; rep++) {
    const source = new BlockSource(population, BigInt(rep), BLOCK, null, blocks);
    const req = { inputLength: LONG_PROMPT, hashIds: Array.from({ length: blocks }, (_, j) => rep * blocks + j) };
    for (const into of [fresh, kept]) {
      const t = performance.now();
      source.promptDigits(req);
      into.push(performance.now() - t);
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  return { fresh: median(fresh), kept: median(kept) };
}

/** The largest gap between consecutive zero-delay timers until `done()`, or for `forMs` when given. */
async function worstTimerGapMs(done: () => boolean, forMs = Infinity): Promise<number> {
  const start = performance.now();
  let last = start;
  let worst = 0;
  while (!done() && last - start < forMs) {
    await new Promise((r) => setTimeout(r, 0));
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }
  return worst;
}

/**
 * The longest the event loop waited while the replay's TraceSource built one LONG_PROMPT-token prompt of new blocks
 * ahead of need (the largest gap between zero-delay timers until the body was ready, median of 9 builds), and the
 * same timer loop with nothing to build for as long (the box's own floor).
 */
async function stallMs(): Promise<{ building: number; idle: number }> {
  const population = Uint32Array.from({ length: 32_000 }, (_, i) => i + 100);
  const template = createTemplate({ input_ids: IDS_PLACEHOLDER, max_new_tokens: 4 });
  const blocks = Math.ceil(LONG_PROMPT / BLOCK);
  const building: number[] = [];
  const idle: number[] = [];
  for (let rep = 0; rep < 9; rep++) {
    const req = {
      line: 1,
      index: 0,
      timestampMs: 0,
      inputLength: LONG_PROMPT,
      outputLength: 4,
      hashIds: Array.from({ length: blocks }, (_, j) => 1_000_000 * (rep + 1) + j),
    };
    let done = false;
    const t0 = performance.now();
    const source = new TraceSource(
      [req],
      new BlockSource(population, BigInt(rep), BLOCK, null, blocks),
      () => template,
      () => undefined,
    );
    void source.filled().then(() => (done = true));
    building.push(await worstTimerGapMs(() => done));
    idle.push(await worstTimerGapMs(() => false, performance.now() - t0));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  return { building: median(building), idle: median(idle) };
}

export async function runReplay(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const conversations = ctx.quick ? 250 : 2500;
  const trace = generateTrace({
    blockSize: BLOCK,
    systems: 8,
    systemBlocks: 2,
    conversations,
    turns: 4,
    maxTurnTokens: 600,
    turnGapMs: 30_000,
    startGapMs: 240,
    outputLength: 4,
    seed: 22,
  });
  const dir = mkdtempSync(join(ctx.workDir, "replay-"));
  const tracePath = join(dir, "trace.jsonl");
  writeFileSync(tracePath, traceText(trace));
  const spanS = (trace.at(-1)!.timestamp - trace[0]!.timestamp) / 1000;
  const maxInput = Math.max(...trace.map((l) => l.input_length));
  progress(`replay: ${trace.length} requests over ${fmt(spanS, 0)} trace s (x ${TIME_SCALE}), prompts up to ${maxInput} tokens`);
  const out = join(dir, "results.jsonl");
  const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), [
    "--page-size",
    "16",
    "--prefill-us-per-token",
    "0",
    "--ttft-base-ms",
    "1",
    "--itl-ms",
    "1",
    "--cache-tokens",
    "50000000",
  ]);
  let proc: Awaited<ReturnType<typeof runBounded>>;
  try {
    const cmd = [
      ctx.bin,
      "replay",
      tracePath,
      "--block-size",
      String(BLOCK),
      "--model",
      ctx.tokenizers.llama2,
      "--base-url",
      mock.url,
      "--settle",
      "0",
      "--time-scale",
      String(TIME_SCALE),
      "--window",
      "60",
      "--quiet",
      "--output-file",
      out,
    ];
    // Set the fetch cap ourselves so warmbench does not re-exec: /proc and rusage then see the real client.
    proc = await runBounded(cmd, { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096", NO_COLOR: "1" }, timeoutMs: 900_000 });
  } finally {
    await mock.stop();
  }
  const build = promptBuildMs();
  const stall = await stallMs();
  const lines = readIfExists(out)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const whole = lines.find((l) => l.type !== "run" && l.window === undefined);
  if (proc.code !== 0 || whole === undefined) throw new Error(`replay bench: warmbench exited ${proc.code}: ${proc.stderrTail.slice(-800)}`);
  const windows = lines.filter((l) => typeof l.window === "number").length;
  const peakMiB = Math.max(proc.sampler.hwmKb / 1024, proc.maxRssMiB);
  const outside = Number(whole.cache_short_requests) + Number(whole.cache_over_requests);
  const figures = {
    requests: trace.length,
    completed: Number(whole.completed),
    windows,
    lagP50Ms: Number(whole.schedule_lag_median_ms),
    lagP99Ms: Number(whole.schedule_lag_p99_ms),
    loopLagP99Ms: Number(whole.client_loop_lag_p99_ms),
    ownLagP99Ms: Number(whole.client_own_lag_p99_ms),
    peakRssMiB: peakMiB,
    outsideRange: outside,
    observedHitRatio: Number(whole.observed_hit_ratio),
    expectedHitRatio: Number(whole.expected_hit_ratio),
    wallS: proc.wallMs / 1000,
    longPromptFreshMs: build.fresh,
    longPromptKeptMs: build.kept,
    longPromptStallMs: stall.building,
    idleStallMs: stall.idle,
  };
  progress(`replay: lag p50 ${fmt(figures.lagP50Ms, 2)} ms, p99 ${fmt(figures.lagP99Ms, 2)} ms, peak RSS ${fmt(peakMiB, 0)} MiB, ${outside} outside the range`);
  return {
    name: "replay",
    title: `Trace replay: ${trace.length} requests (Mooncake format, ${BLOCK}-token blocks, prompts up to ${maxInput} tokens) over ${fmt(spanS, 0)} trace s at --time-scale ${TIME_SCALE}, against the mock`,
    columns: [
      "requests",
      "completed",
      "window lines",
      "schedule lag p50 ms",
      "schedule lag p99 ms",
      "event-loop lag p99 ms (the client's own)",
      "peak RSS MiB",
      "requests outside the predicted range",
      "observed hit ratio",
      "expected hit ratio",
      "wall s",
    ],
    rows: [
      [
        String(trace.length),
        String(figures.completed),
        String(windows),
        fmt(figures.lagP50Ms, 2),
        fmt(figures.lagP99Ms, 2),
        `${fmt(figures.loopLagP99Ms, 2)} (${fmt(figures.ownLagP99Ms, 2)})`,
        fmt(peakMiB, 0),
        String(outside),
        fmt(figures.observedHitRatio, 3),
        fmt(figures.expectedHitRatio, 3),
        fmt(figures.wallS, 0),
      ],
    ],
    targets: [
      {
        target: "a 10k-request replay keeps its schedule (lag p99 < 10 ms) and every request's hit in its predicted range",
        measured: `lag p99 ${fmt(figures.lagP99Ms, 2)} ms, ${outside} of ${figures.completed} outside the range`,
        pass: ctx.quick ? null : figures.lagP99Ms < 10 && outside === 0,
      },
    ],
    notes: [
      "Schedule lag: each request's actual send minus its scaled trace timestamp (the whole replay's schedule_lag_median_ms and schedule_lag_p99_ms).",
      "Event-loop lag: how late the client's 10 ms probe timer fired (p99), and the part its own JS work explains; lag the client does not explain is the machine's (other processes on its cores).",
      "Peak RSS: the client process's VmHWM sampled every 100 ms and its rusage maxRSS, the larger.",
      `Building one ${LONG_PROMPT}-token prompt on the JS thread (BlockSource.promptDigits, median of 7): ${fmt(build.fresh, 1)} ms with all its ${Math.ceil(LONG_PROMPT / BLOCK)} blocks new (drawn and serialized), ${fmt(build.kept, 3)} ms with them kept (views of the kept digits). The replay draws a prompt's new blocks one at a time in 2-ms slices between looks at the clock: while its TraceSource built such a prompt ahead of need, the event loop waited at most ${fmt(stall.building, 2)} ms (largest gap between zero-delay timers until the body was ready, median of 9), against ${fmt(stall.idle, 2)} ms for the same timers with nothing to build for as long.`,
      "Outside the range: cache_short_requests + cache_over_requests of the whole replay's line (the mock's cache of 50M tokens holds the whole trace). The mock runs at page size 16: at page size 1 a server that caches generated tokens (SGLang, the mock) can serve one token more than predicted when a continued turn's next id happens to equal the first generated one (about once per population-size continued turns).",
      `The trace: 8 system prompts of ${2 * BLOCK} tokens, ${conversations} conversations of 4 turns (30 trace s apart, up to 600 new tokens each), two conversations starting at each 240-ms step (test/helpers/mooncake-trace.ts).`,
    ],
    trials: [],
    figures,
    elapsedS: (performance.now() - t0) / 1000,
  };
}
