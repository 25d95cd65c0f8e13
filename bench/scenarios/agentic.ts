/**
 * Agentic replay at scale (issue 38): `warmbench replay` of a generated WEKA corpus of 200 coding-agent sessions
 * (about 20,000 requests, subagents included) in 200 lanes at once, 10x faster than recorded (--time-scale 0.1),
 * against one mock process whose cache holds the whole corpus. What it measures: whether the client keeps the session
 * schedule (schedule lag = actual send - the intended send the schedule gives from intended sends and reported ends:
 * the whole replay's schedule_lag_* figures, and its maximum from --request-details), the client's peak RSS with 200
 * growing contexts and their subagents in flight, requests completed / failed and the wall time; beside them the
 * client's event-loop lag, its CPU and the mock's, the box's load, and how many requests reported cached tokens
 * outside the range the client predicted (0 expected: the cache holds everything).
 *
 * The corpus (written here, seeded: the idea of test/unit/agentic/session-schedule.test.ts's synthetic corpus, not
 * its code): each session a root chain of tool-call turns whose prompt grows by appending (the previous answer and a
 * tool result), think times of a few seconds with some past --max-idle's 10-s cap, and subagents launched after a
 * root turn - one, or several fanned out together - each with its own context (a system prompt shared by the
 * session's subagents, then its own blocks), most joined by the root's next turn, some left in the background.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { readIfExists, runBounded, startMock, type ProcOutcome } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt, spread } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";
import { seededUniform } from "../../src/metrics/seeded-uniform.ts";

const BLOCK = 64;
const TIME_SCALE = 0.1;
const LAG_P99_MS = 10;
const RSS_MIB = 1024;
/** The mock's cache, tokens: larger than the corpus's working set, so every prompt's history is still cached. */
const MOCK_CACHE_TOKENS = 64_000_000;

/** Sizes of a run: the full one, or --quick's. */
interface Shape {
  sessions: number;
  /** Root turns per session, uniform in [min, max]. */
  rootTurns: [number, number];
}

const FULL: Shape = { sessions: 200, rootTurns: [62, 95] };
const QUICK: Shape = { sessions: 20, rootTurns: [8, 14] };

/** A small seeded generator, so the corpus is the same in every run. */
const rng = seededUniform;

type Json = Record<string, unknown>;

/** What the corpus holds, counted as it is written. */
interface CorpusStats {
  sessions: number;
  requests: number;
  rootRequests: number;
  subagents: number;
  /** Launches of two or more subagents after one root turn. */
  fanOuts: number;
  /** Subagents the root's next turn does not wait for. */
  background: number;
  maxInput: number;
  meanInput: number;
  /** Distinct prompt tokens (every block once, at its longest use). */
  workingSetTokens: number;
  /** Recorded span of the longest session, trace s. */
  longestSessionS: number;
}

/** Each call's hash ids by `trace id|agent path|turn`, as --request-details names a request. */
type CallIds = Map<string, number[]>;

/**
 * One session's WEKA record. Block j of a chain keeps its hash id while the chain grows (prompts grow by appending):
 * the root's blocks are 1, 2, ...; the session's subagents share a system prompt (ids from 500,000) and then have
 * their own (from 1,000,000 x (k + 1)); ids are local to the trace (hash_id_scope local).
 */
function session(s: number, shape: Shape, r: () => number, stats: CorpusStats, longest: Map<number, number>, idsOf: CallIds): Json {
  const id = `synthetic_${String(s).padStart(4, "0")}`;
  const uniform = (lo: number, hi: number) => lo + r() * (hi - lo);
  const int = (lo: number, hi: number) => Math.floor(uniform(lo, hi + 1));
  const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
  const hashIds = (base: number, sharedBase: number | null, sharedBlocks: number, input: number): number[] =>
    Array.from({ length: Math.floor(input / BLOCK) }, (_, j) => (sharedBase !== null && j < sharedBlocks ? sharedBase + j : base + j));
  const seen = (key: number, tokens: number) => longest.set(key, Math.max(longest.get(key) ?? 0, tokens));
  const call = (key: string, t: number, input: number, out: number, ids: number[], think: number, api: number): Json => {
    idsOf.set(`${id}|${key}`, ids);
    stats.requests++;
    stats.maxInput = Math.max(stats.maxInput, input);
    stats.meanInput += input;
    for (const id of ids) seen(id + s * 1e9, BLOCK);
    return { t: round(t), type: "n", in: input, out, hash_ids: ids, think_time: round(think, 1), api_time: round(api, 2) };
  };
  // A think time: mostly a few seconds, one in seven past --max-idle's cap (which clamps it to 10 trace s).
  const think = (short: boolean) => (r() < 1 / 7 ? uniform(10, 90) : short ? uniform(0.5, 4) : uniform(2, 9));
  const apiTime = (input: number, out: number) => 0.8 + out * 0.025 + input * 0.00003 + r();

  const steps: Json[] = [];
  const turns = int(shape.rootTurns[0], shape.rootTurns[1]);
  const launches = r() < 0.25 ? 0 : int(1, 3);
  const launchAt = new Set<number>();
  while (launchAt.size < Math.min(launches, turns - 2)) launchAt.add(int(1, turns - 2));
  let input = int(3000, 5000);
  let t = 0;
  let agents = 0;
  let end = 0;
  // The recorded think time before this turn: from the previous answer's end to this send.
  let thought = 0;
  for (let i = 0; i < turns; i++) {
    const out = int(20, 100);
    const api = apiTime(input, out);
    const gap = think(false);
    steps.push(call(`|${i}`, t, input, out, hashIds(1, null, 0, input), thought, api));
    stats.rootRequests++;
    const callEnd = t + api;
    let next = callEnd + gap;
    if (launchAt.has(i)) {
      const fan = r() < 0.4 ? int(2, 4) : 1;
      if (fan > 1) stats.fanOuts++;
      // The Task tool's agents start together just after this turn's answer; the root waits for them unless they run
      // in the background.
      const background = r() < 0.2;
      const spawn = callEnd + uniform(0.2, 1);
      let latest = spawn;
      for (let k = 0; k < fan; k++) {
        const agent = agents++;
        const agentId = `agent_${String(agent + 1).padStart(3, "0")}`;
        stats.subagents++;
        if (background) stats.background++;
        const inner: Json[] = [];
        let sub = int(2500, 6000);
        let u = 0;
        let subEnd = 0;
        let subThought = 0;
        for (let c = 0, calls = int(4, 12); c < calls; c++) {
          const subOut = int(20, 100);
          const subApi = apiTime(sub, subOut);
          const subGap = think(true);
          inner.push(call(`${agentId}|${c}`, u, sub, subOut, hashIds(1_000_000 * (agent + 1), 500_000, 32, sub), subThought, subApi));
          subThought = subGap;
          subEnd = u + subApi;
          u = subEnd + subGap;
          sub += subOut + int(200, 1500);
        }
        const durationS = subEnd;
        latest = Math.max(latest, spawn + durationS);
        // result-minus-duration (the WEKA tools' reading): the wrapper's t is when the result came back.
        steps.push({ type: "subagent", t: round(spawn + durationS), agent_id: agentId, duration_ms: Math.round(durationS * 1000), requests: inner });
      }
      if (!background) next = Math.max(next, latest + uniform(0.2, 1));
    }
    end = Math.max(end, callEnd);
    thought = next - callEnd;
    t = next;
    input += out + int(60, 400);
  }
  stats.longestSessionS = Math.max(stats.longestSessionS, end);
  return { id, block_size: BLOCK, hash_id_scope: "local", requests: steps };
}

/** The corpus as one WEKA record per line. */
function corpus(shape: Shape, seed: number): { text: string; stats: CorpusStats; ids: CallIds } {
  const r = rng(seed);
  const stats: CorpusStats = {
    sessions: shape.sessions,
    requests: 0,
    rootRequests: 0,
    subagents: 0,
    fanOuts: 0,
    background: 0,
    maxInput: 0,
    meanInput: 0,
    workingSetTokens: 0,
    longestSessionS: 0,
  };
  const longest = new Map<number, number>();
  const ids: CallIds = new Map();
  const lines: string[] = [];
  for (let s = 0; s < shape.sessions; s++) lines.push(JSON.stringify(session(s, shape, r, stats, longest, ids)));
  stats.meanInput /= Math.max(1, stats.requests);
  for (const tokens of longest.values()) stats.workingSetTokens += tokens;
  return { text: `${lines.join("\n")}\n`, stats, ids };
}

/** One replayed request as --request-details gives it (epoch ms). */
interface Sent {
  intendedMs: number;
  startMs: number;
  endMs: number;
  lag: number;
  /** A lane's first root turn: all of them are due at the schedule's origin. */
  first: boolean;
  key: string;
}

type Sampler = ProcOutcome["sampler"];

/** Blocks the replay keeps drawn (run-agentic.ts: 4M tokens' worth, at least 4096 blocks). */
const KEPT_BLOCKS = Math.max(4096, Math.ceil(2 ** 22 / BLOCK));

/**
 * The replay tenth by tenth of its span (first intended send to last end): requests, schedule lag, lanes' first
 * turns, the client's and the mock's CPU, the client's RSS, and the blocks a kept-block LRU of the client's size
 * would draw for the requests sent then (a model, in send order: the client also draws ahead of need).
 */
function perTenth(sent: readonly Sent[], ids: CallIds, client: Sampler, mock: Sampler): string[][] {
  if (sent.length === 0) return [];
  const from = sent.reduce((m, x) => Math.min(m, x.intendedMs), Infinity);
  const to = sent.reduce((m, x) => Math.max(m, x.endMs), -Infinity);
  const step = (to - from) / 10;
  const tenth = (ms: number) => Math.min(9, Math.max(0, Math.floor((ms - from) / step)));
  const drawn = new Array<number>(10).fill(0);
  const kept = new Map<string, true>();
  let tails = 0;
  for (const x of [...sent].sort((a, b) => a.startMs - b.startMs)) {
    const trace = x.key.slice(0, x.key.indexOf("|"));
    const touch = (key: string) => {
      if (kept.delete(key)) kept.set(key, true);
      else {
        drawn[tenth(x.startMs)]!++;
        kept.set(key, true);
        if (kept.size > KEPT_BLOCKS) kept.delete(kept.keys().next().value!);
      }
    };
    for (const h of ids.get(x.key) ?? []) touch(`${trace}#${h}`);
    touch(`tail${tails++}`);
  }
  const rows: string[][] = [];
  for (let k = 0; k < 10; k++) {
    const a = from + k * step;
    const b = a + step;
    const lags = spread(sent.filter((x) => tenth(x.intendedMs) === k).map((x) => x.lag));
    const pct = (sm: Sampler) => (sm.cpuMsBetween(a, b) / step) * 100;
    const rss = client.samples.filter((x) => x.epochMs >= a && x.epochMs < b).reduce((m, x) => Math.max(m, x.rssKb / 1024), 0);
    rows.push([
      `${k * 10}-${k * 10 + 10} %`,
      String(lags.count),
      String(sent.filter((x) => x.first && tenth(x.intendedMs) === k).length),
      fmt(lags.p50, 2),
      fmt(lags.p99, 1),
      fmt(lags.max, 1),
      String(drawn[k]),
      fmt(pct(client), 0),
      fmt(pct(mock), 0),
      fmt(rss, 0),
    ]);
  }
  return rows;
}

export async function runAgentic(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const shape = ctx.quick ? QUICK : FULL;
  const { text, stats, ids } = corpus(shape, 38);
  const dir = mkdtempSync(join(ctx.workDir, "agentic-"));
  const tracePath = join(dir, "sessions.jsonl");
  writeFileSync(tracePath, text);
  progress(
    `agentic: ${stats.sessions} sessions, ${stats.requests} requests (${stats.subagents} subagents, ${stats.fanOuts} fan-outs), prompts up to ${stats.maxInput} tokens, working set ${(stats.workingSetTokens / 1e6).toFixed(1)}M tokens; --time-scale ${TIME_SCALE}`,
  );
  const out = join(dir, "results.jsonl");
  const detailsPath = join(dir, "details.jsonl");
  const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), [
    "--page-size",
    "16",
    "--prefill-us-per-token",
    "0",
    "--ttft-base-ms",
    "1",
    "--itl-ms",
    "1",
    "--incremental",
    "--max-running",
    "4096",
    "--cache-tokens",
    String(MOCK_CACHE_TOKENS),
  ]);
  const loadBefore = loadavg()[0]!;
  let proc: Awaited<ReturnType<typeof runBounded>>;
  let mockCpuMs = NaN;
  let mockMaxInFlight = NaN;
  try {
    const cmd = [
      ctx.bin,
      "replay",
      tracePath,
      "--model",
      ctx.tokenizers.llama2,
      "--base-url",
      mock.url,
      "--settle",
      "0",
      "--sessions",
      String(shape.sessions),
      "--time-scale",
      String(TIME_SCALE),
      "--quiet",
      "--output-file",
      out,
      "--request-details",
      detailsPath,
    ];
    // Set the fetch cap ourselves so warmbench does not re-exec: /proc and rusage then see the real client.
    proc = await runBounded(cmd, { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096", NO_COLOR: "1" }, timeoutMs: ctx.quick ? 120_000 : 540_000 });
    try {
      mockMaxInFlight = (await mock.stats()).maxInFlight;
    } catch {
      // a mock that died shows as NaN
    }
  } finally {
    await mock.stop();
    const samples = mock.sampler.samples;
    if (samples.length > 1) mockCpuMs = samples.at(-1)!.cpuMs - samples[0]!.cpuMs;
  }
  const loadAfter = loadavg()[0]!;
  const line = readIfExists(out)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.type !== "run");
  if (line === undefined) throw new Error(`agentic bench: warmbench exited ${proc.code}${proc.timedOut ? " (killed)" : ""}: ${proc.stderrTail.slice(-800)}`);
  const details = readIfExists(detailsPath)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const sent = details.map((d) => ({
    intendedMs: Number(d.intended_epoch_ms),
    startMs: Number(d.start_epoch_ms),
    endMs: Number(d.start_epoch_ms) + Number(d.latency_ms),
    lag: Number(d.start_epoch_ms) - Number(d.intended_epoch_ms),
    first: d.agent_path === "" && d.turn === 0,
    key: `${String(d.trace_id)}|${String(d.agent_path)}|${String(d.turn)}`,
  }));
  const fromDetails = spread(sent.map((x) => x.lag));
  const firstTurns = spread(sent.filter((x) => x.first).map((x) => x.lag));
  const laterTurns = spread(sent.filter((x) => !x.first).map((x) => x.lag));
  const lastEndMs = sent.reduce((m, x) => Math.max(m, x.endMs), -Infinity);
  const rssMiB = (during: boolean) => proc.sampler.samples.filter((x) => x.epochMs <= lastEndMs === during).reduce((m, x) => Math.max(m, x.rssKb / 1024), 0);
  const tenths = perTenth(sent, ids, proc.sampler, mock.sampler);
  const agentic = (line.agentic ?? {}) as Record<string, Record<string, number> | number | null>;
  const spreadOf = (key: string, field: string) => {
    const v = agentic[key];
    return v !== null && typeof v === "object" ? Number(v[field]) : NaN;
  };
  const peakMiB = Math.max(proc.sampler.hwmKb / 1024, proc.maxRssMiB);
  const outside = Number(line.cache_short_requests) + Number(line.cache_over_requests);
  const figures = {
    sessions: stats.sessions,
    requests: stats.requests,
    completed: Number(line.completed),
    failed: Number(line.failed),
    lagP50Ms: Number(line.schedule_lag_median_ms),
    lagP99Ms: Number(line.schedule_lag_p99_ms),
    lagMaxMs: fromDetails.max,
    detailsLagP99Ms: fromDetails.p99,
    loopLagP99Ms: Number(line.client_loop_lag_p99_ms),
    ownLagP99Ms: Number(line.client_own_lag_p99_ms),
    peakRssMiB: peakMiB,
    wallS: proc.wallMs / 1000,
    clientCpuS: proc.cpuMs / 1000,
    mockCpuS: mockCpuMs / 1000,
    mockMaxInFlight,
    loadBefore,
    loadAfter,
    outsideRange: outside,
    subagentConcurrencyMax: spreadOf("subagent_concurrency", "max"),
    jctP50S: spreadOf("jct_ms", "p50") / 1000,
    jctMaxS: spreadOf("jct_ms", "max") / 1000,
    workingSetTokens: stats.workingSetTokens,
    firstTurnLagMinMs: firstTurns.count > 0 ? Math.min(...sent.filter((x) => x.first).map((x) => x.lag)) : NaN,
    firstTurnLagMaxMs: firstTurns.max,
    laterLagP99Ms: laterTurns.p99,
    rssDuringMiB: rssMiB(true),
    rssAfterMiB: rssMiB(false),
  };
  progress(
    `agentic: ${figures.completed} completed, ${figures.failed} failed; lag p50 ${fmt(figures.lagP50Ms, 2)} / p99 ${fmt(figures.lagP99Ms, 2)} / max ${fmt(figures.lagMaxMs, 1)} ms; peak RSS ${fmt(peakMiB, 0)} MiB; ${fmt(figures.wallS, 0)} s`,
  );
  const judged = !ctx.quick && proc.code === 0 && !proc.timedOut && figures.completed === stats.requests;
  const ran = proc.timedOut ? `; client killed after ${fmt(figures.wallS, 0)} s` : proc.code !== 0 ? `; client exit ${proc.code}` : "";
  const targets: TargetCheck[] = [
    {
      target: `${stats.sessions} agentic sessions (${stats.requests} requests) at --time-scale ${TIME_SCALE} keep the schedule: lag p99 <= ${LAG_P99_MS} ms`,
      measured: `lag p99 ${fmt(figures.lagP99Ms, 2)} ms (p50 ${fmt(figures.lagP50Ms, 2)}, max ${fmt(figures.lagMaxMs, 1)}; the lanes' first turns ${fmt(figures.firstTurnLagMinMs, 1)}-${fmt(figures.firstTurnLagMaxMs, 1)}, the later turns' p99 ${fmt(figures.laterLagP99Ms, 1)}), ${figures.completed} completed, ${figures.failed} failed${ran}`,
      pass: judged ? figures.lagP99Ms <= LAG_P99_MS && figures.failed === 0 : null,
    },
    {
      target: `the same replay's peak RSS < 1 GiB`,
      measured: `${fmt(peakMiB, 0)} MiB (VmRSS at most ${fmt(figures.rssDuringMiB, 0)} MiB while the schedule ran, ${fmt(figures.rssAfterMiB, 0)} MiB after its last answer)`,
      pass: judged ? peakMiB < RSS_MIB : null,
    },
  ];
  return {
    name: "agentic",
    title: `Agentic replay: ${stats.sessions} WEKA sessions in ${stats.sessions} lanes (${stats.requests} requests, ${stats.subagents} subagents, prompts up to ${stats.maxInput} tokens) at --time-scale ${TIME_SCALE}, against the mock`,
    columns: [
      "requests",
      "completed",
      "failed",
      "schedule lag p50 ms",
      "schedule lag p99 ms",
      "schedule lag max ms",
      "lanes' first turns' lag ms (min-max)",
      "later turns' lag p99 ms",
      "event-loop lag p99 ms (the client's own)",
      "peak RSS MiB (VmRSS during / after the schedule)",
      "client CPU s",
      "mock CPU s",
      "load before / after",
      "most chains at once in a session",
      "outside the predicted range",
      "wall s",
    ],
    rows: [
      [
        String(stats.requests),
        String(figures.completed),
        String(figures.failed),
        fmt(figures.lagP50Ms, 2),
        fmt(figures.lagP99Ms, 2),
        fmt(figures.lagMaxMs, 1),
        `${fmt(figures.firstTurnLagMinMs, 1)}-${fmt(figures.firstTurnLagMaxMs, 1)}`,
        fmt(figures.laterLagP99Ms, 1),
        `${fmt(figures.loopLagP99Ms, 2)} (${fmt(figures.ownLagP99Ms, 2)})`,
        `${fmt(peakMiB, 0)} (${fmt(figures.rssDuringMiB, 0)} / ${fmt(figures.rssAfterMiB, 0)})`,
        fmt(figures.clientCpuS, 0),
        fmt(figures.mockCpuS, 0),
        `${fmt(loadBefore, 1)} / ${fmt(loadAfter, 1)}`,
        fmt(figures.subagentConcurrencyMax, 0),
        String(outside),
        fmt(figures.wallS, 0),
      ],
    ],
    targets,
    notes: [
      `Command: \`warmbench replay sessions.jsonl --sessions ${stats.sessions} --time-scale ${TIME_SCALE} --settle 0 --request-details FILE\` with the defaults otherwise (delay end-to-start, spawn result-minus-duration, join first-after-end, --max-idle 10 trace s, no --max-concurrency limit); ${stats.sessions} lanes, one session tree each.`,
      "Schedule lag: each request's actual send minus the intended send the session schedule gives it (its previous answer's reported end plus the scaled recorded gap; a subagent's spawn, a join's children's ends): the whole replay's schedule_lag_median_ms and schedule_lag_p99_ms; the max is start_epoch_ms - intended_epoch_ms over every --request-details line. The server's answer time is not lag: the schedule follows the reported ends.",
      "The lanes' first turns: every lane's first root turn is due at the schedule's origin, so they are sent one after another; the least of their lags is the time from the origin to the first send (the schedule is built after the origin is taken: src/replay/agentic-driver.ts), the spread between least and most is the cost of sending them in turn. They are 1 % of the requests of the full run, so the line's p99 falls at their edge; 'later turns' is the p99 of every other request.",
      "Peak RSS during / after: the largest VmRSS sample up to the last answer (the schedule running), and after it (the replay's line, its cache model over every request and the --request-details file being made).",
      `Tenths: the requests whose intended send falls in each tenth of the span; CPU is the client's (all threads) and the mock's, % of one core, from the /proc samples; 'blocks drawn' replays the sends (in send order) through an LRU of ${KEPT_BLOCKS} blocks (the client keeps 4M tokens' worth of drawn blocks, run-agentic.ts) plus each request's own tail block: once the sessions' live contexts outgrow it, every turn redraws blocks of its history on the JS thread (a model: the client also draws ahead of need, so its own count differs).`,
      "Event-loop lag: how late the client's 10 ms probe timer fired (p99), and the part its own JS work explains; lag the client does not explain is the machine's (the mock and other processes on its 2 cores). Load: the 1-minute load average before and after the replay.",
      "Peak RSS: the client process's VmHWM sampled every 100 ms and its rusage maxRSS, the larger. CPU: the client's rusage (whole life) and the mock's /proc samples over its life.",
      `The mock: \`--page-size 16 --prefill-us-per-token 0 --ttft-base-ms 1 --itl-ms 1 --incremental --max-running 4096 --cache-tokens ${MOCK_CACHE_TOKENS}\`: a cache larger than the corpus's working set of ${stats.workingSetTokens} distinct prompt tokens, so nothing is evicted and every turn's history hits (outside the range = cache_short_requests + cache_over_requests of the line, 0 expected).`,
      `The corpus (bench/scenarios/agentic.ts, seeded): ${stats.sessions} sessions, ${stats.rootRequests} root turns (${shape.rootTurns[0]}-${shape.rootTurns[1]} per session) and ${stats.requests - stats.rootRequests} subagent calls; prompts start at 3000-5000 tokens (a subagent's at 2500-6000, 2048 of them a system prompt shared by the session's subagents) and grow by appending the answer (20-100 tokens) and 60-400 new tokens a turn (a subagent's 200-1500), mean ${fmt(stats.meanInput, 0)} tokens; think times 2-9 trace s (a subagent's 0.5-4), one in seven 10-90 s (clamped to 10 by --max-idle); ${stats.subagents} subagents launched after a root turn, ${stats.fanOuts} launches of 2-4 at once, ${stats.background} in the background (the root's next turn does not wait for them); the longest session spans ${fmt(stats.longestSessionS, 0)} recorded s.`,
    ],
    trials: [],
    figures,
    extraTables: [
      {
        title: `Agentic replay, tenth by tenth of its span (first intended send to last answer; requests by intended send)`,
        columns: [
          "tenth",
          "requests",
          "lanes' first turns",
          "schedule lag p50 ms",
          "schedule lag p99 ms",
          "schedule lag max ms",
          `blocks drawn (model of the client's ${KEPT_BLOCKS}-block store)`,
          "client CPU %",
          "mock CPU %",
          "client VmRSS max MiB",
        ],
        rows: tenths,
      },
    ],
    elapsedS: (performance.now() - t0) / 1000,
  };
}
