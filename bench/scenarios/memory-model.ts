/**
 * The memory model (src/config/memory-model.ts) against the compiled binary's measured peak: each shape is run
 * against a mock process, its peak resident memory (VmHWM of the process tree, sampled, and rusage maxrss, the
 * larger) compared with the model's estimate for the same flags. The target: every shape within 1.5x either way, so
 * the pre-check that refuses a run before anything is sent (config/bounds.ts checkMemory) neither lets a run that
 * would take the machine through nor refuses one that fits. Sweeps, multi-turn runs and trace replays: Mooncake
 * traces (test/helpers/mooncake-trace.ts) in a closed loop, and generated WEKA corpora of agentic sessions, their
 * shapes read from the parsed trace as `warmbench replay` reads them (src/replay/memory-shape.ts).
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { multiturnMemoryBytes, replayMemoryBytes, sweepMemoryBytes, type ReplayShape } from "../../src/config/memory-model.ts";
import type { MadeReplay, ReplaySpec } from "../lib/memory-model-replays.ts";
import { splitPrompt } from "../../src/workload/prompts.ts";
import { promptLenOf } from "../../src/multiturn/plan.ts";
import { runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const MIB = 1024 * 1024;

interface Shape {
  label: string;
  args: string[];
  estimateBytes: number;
  /** A replay's shape, as the model reads it. */
  replay?: ReplayShape;
}

/** A sweep's shape and the model's estimate for it. */
function sweep(label: string, o: { pct: number; totalTokens: number; numPrompts: number; concurrency: number; workingSet: number; workers: number }): Shape {
  const prefix = splitPrompt(o.totalTokens, o.pct).prefixLen;
  return {
    label,
    args: ["--pcts", String(o.pct), "--total-tokens", String(o.totalTokens), "--num-prompts", String(o.numPrompts)]
      .concat(["--max-concurrency", String(o.concurrency), "--working-set", String(o.workingSet)])
      .concat(o.workers > 1 ? ["--workers", String(o.workers)] : []),
    estimateBytes: sweepMemoryBytes({
      workingSetTokens: o.workingSet * prefix,
      inFlightTokens: Math.min(o.concurrency, o.numPrompts) * o.totalTokens,
      workers: o.workers,
    }),
  };
}

/** A multi-turn run's shape (no system prompt, answers of 2 tokens) and the model's estimate for it. */
function multiturn(label: string, o: { clients: number; rounds: number; firstTurn: number; turn: number }): Shape {
  const plan = { sharedSystemTokens: 0, firstTurnTokens: o.firstTurn, turnTokens: o.turn, outputLen: 2, numRounds: o.rounds };
  let promptTokens = 0;
  for (let r = 0; r < o.rounds; r++) promptTokens += promptLenOf(plan, r);
  return {
    label,
    args: ["multiturn", "--num-clients", String(o.clients), "--num-rounds", String(o.rounds), "--shared-system-tokens", "0"].concat([
      "--first-turn-tokens",
      String(o.firstTurn),
      "--turn-tokens",
      String(o.turn),
      "--max-concurrency",
      "64",
    ]),
    estimateBytes: multiturnMemoryBytes({
      conversations: o.clients,
      turns: o.clients * o.rounds,
      historyTokens: o.clients * promptLenOf(plan, o.rounds - 1),
      turnPromptTokens: o.clients * promptTokens,
      workers: 1,
    }),
  };
}

/** A replay's trace and the model's estimate for it, its file and shape made by the helper (memory-model-replays.ts). */
function replay(label: string, spec: ReplaySpec, made: ReadonlyMap<string, MadeReplay>): Shape {
  const { path, shape } = made.get(spec.name)!;
  const flags =
    spec.kind === "mooncake"
      ? ["--block-size", String(spec.blockSize), "--ignore-timestamps", "--max-concurrency", "64"]
      : ["--sessions", String(spec.lanes), "--time-scale", "0.01"];
  return { label, args: ["replay", path, ...flags], estimateBytes: replayMemoryBytes(shape), replay: shape };
}

/** The replays' traces and corpora, at full size or --quick's. */
function replaySpecs(s: number): Record<string, ReplaySpec> {
  return {
    m512: { kind: "mooncake", name: "m512", conversations: 2500 / s, blockSize: 512, systemBlocks: 2, maxTurnTokens: 600 },
    m16: { kind: "mooncake", name: "m16", conversations: 2500 / s, blockSize: 16, systemBlocks: 64, maxTurnTokens: 600 },
    m64: { kind: "mooncake", name: "m64", conversations: 5000 / s, blockSize: 64, systemBlocks: 16, maxTurnTokens: 2000 },
    a50: { kind: "agentic", name: "a50", sessions: 50 / s, rootTurns: [20, 30], lanes: 50 / s },
    a50x4: { kind: "agentic", name: "a50x4", sessions: 50 / s, rootTurns: [20, 30], lanes: 200 / s },
    a120: { kind: "agentic", name: "a120", sessions: 120 / s, rootTurns: [40, 60], lanes: 120 / s },
  };
}

/**
 * Writes the replays' traces into `dir` in a process of its own, and reads back each one's path and shape: a child's
 * rusage maxrss starts from its parent's resident memory (exec keeps the high-water mark), so traces built in this
 * process would count in the peak of every shape measured after them (the 1000-token sweep measured 171 MiB, not 114).
 */
function makeReplays(dir: string, specs: readonly ReplaySpec[]): Map<string, MadeReplay> {
  const helper = join(import.meta.dir, "../lib/memory-model-replays.ts");
  const r = Bun.spawnSync([process.execPath, helper, dir, JSON.stringify(specs)], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`memory-model: making the replays' traces exited ${r.exitCode}: ${r.stderr.toString().slice(-400)}`);
  return new Map(Object.entries(JSON.parse(r.stdout.toString()) as Record<string, MadeReplay>));
}

function shapes(quick: boolean, dir: string): Shape[] {
  const s = quick ? 4 : 1;
  const specs = replaySpecs(s);
  const made = makeReplays(dir, Object.values(specs));
  return [
    sweep("sweep, base", { pct: 50, totalTokens: 1000, numPrompts: 16, concurrency: 16, workingSet: 1, workers: 1 }),
    sweep(`sweep, working set ${200 / s} x 9000-token prefixes`, {
      pct: 90,
      totalTokens: 10_000,
      numPrompts: 16,
      concurrency: 16,
      workingSet: 200 / s,
      workers: 1,
    }),
    sweep(`sweep, working set ${800 / s} x 9000-token prefixes`, {
      pct: 90,
      totalTokens: 10_000,
      numPrompts: 16,
      concurrency: 16,
      workingSet: 800 / s,
      workers: 1,
    }),
    sweep("sweep, 256 x 8000-token prompts in flight", { pct: 0, totalTokens: 8000, numPrompts: 512, concurrency: 256, workingSet: 1, workers: 1 }),
    sweep(`sweep, ${1000 / s} x 8000-token prompts in flight`, {
      pct: 0,
      totalTokens: 8000,
      numPrompts: 2000 / s,
      concurrency: 1000 / s,
      workingSet: 1,
      workers: 1,
    }),
    sweep("sweep, 4 worker processes", { pct: 50, totalTokens: 1000, numPrompts: 64, concurrency: 64, workingSet: 1, workers: 4 }),
    multiturn(`multiturn, ${20_000 / s} short conversations x 2 rounds`, { clients: 20_000 / s, rounds: 2, firstTurn: 32, turn: 16 }),
    multiturn(`multiturn, ${20_000 / s} short conversations x 4 rounds`, { clients: 20_000 / s, rounds: 4, firstTurn: 32, turn: 16 }),
    multiturn(`multiturn, ${2000 / s} conversations of 4000-token turns`, { clients: 2000 / s, rounds: 2, firstTurn: 4000, turn: 16 }),
    replay(`replay, Mooncake ${(10_000 / s).toLocaleString("en")} requests, 512-token blocks`, specs.m512!, made),
    replay(`replay, Mooncake ${(10_000 / s).toLocaleString("en")} requests, 16-token blocks`, specs.m16!, made),
    replay(`replay, Mooncake ${(20_000 / s).toLocaleString("en")} requests, 64-token blocks`, specs.m64!, made),
    replay(`replay, agentic ${50 / s} sessions in ${50 / s} lanes`, specs.a50!, made),
    replay(`replay, agentic ${50 / s} sessions in ${200 / s} lanes`, specs.a50x4!, made),
    replay(`replay, agentic ${120 / s} sessions in ${120 / s} lanes`, specs.a120!, made),
  ];
}

export async function runMemoryModel(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const mock = await startMock(ctx.bin, join(ctx.workDir, "memory-model-truth.jsonl"), [
    "--page-size",
    "16",
    "--itl-ms",
    "1",
    "--ttft-base-ms",
    "1",
    "--context-length",
    "20000000",
  ]);
  const rows: string[][] = [];
  const ratios: number[] = [];
  const details: Record<string, unknown> = {};
  try {
    for (const shape of shapes(ctx.quick, mkdtempSync(join(ctx.workDir, "memory-model-")))) {
      const common = ["--model", ctx.tokenizers.llama2, "--base-url", mock.url, "--settle", "0", "--quiet"];
      const base = [...common, "--output-len", "2"];
      const [kind, trace] = shape.args;
      const cmd =
        kind === "replay"
          ? [ctx.bin, "replay", trace!, ...common, ...shape.args.slice(2)]
          : kind === "multiturn"
            ? [ctx.bin, "multiturn", ...base, ...shape.args.slice(1)]
            : [ctx.bin, ...base, ...shape.args];
      // A replay's fetch cap set here, so warmbench does not re-exec: /proc and rusage then see the real client.
      const r = await runBounded(cmd, { env: kind === "replay" ? { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" } : {}, timeoutMs: 300_000 });
      if (r.code !== 0) throw new Error(`memory-model: ${shape.label} exited ${r.code}: ${r.stderrTail.slice(-400)}`);
      const peakBytes = Math.max(r.sampler.hwmKb * 1024, r.maxRssMiB * MIB);
      const ratio = shape.estimateBytes / peakBytes;
      ratios.push(ratio);
      details[shape.label] = {
        peakBytes,
        estimateBytes: shape.estimateBytes,
        ratio,
        wallMs: r.wallMs,
        ...(shape.replay === undefined ? {} : { shape: shape.replay }),
      };
      rows.push([shape.label, fmt(peakBytes / MIB, 0), fmt(shape.estimateBytes / MIB, 0), fmt(ratio, 2), fmt(r.wallMs / 1000, 1)]);
      progress(`memory-model: ${shape.label}: peak ${fmt(peakBytes / MIB, 0)} MiB, estimate ${fmt(shape.estimateBytes / MIB, 0)} MiB (x${fmt(ratio, 2)})`);
    }
  } finally {
    await mock.stop();
  }
  const worst = ratios.reduce((w, x) => Math.max(w, x, 1 / x), 1);
  return {
    name: "memory-model",
    title: "The memory model's estimate against the measured peak RSS of each shape",
    columns: ["shape", "peak MiB", "estimate MiB", "estimate / peak", "wall s"],
    rows,
    targets: [{ target: "every shape's estimate within 1.5x of its peak", measured: `worst x${fmt(worst, 2)}`, pass: worst <= 1.5 }],
    notes: [
      "Peak: the larger of the process tree's VmHWM (sampled every 100 ms) and rusage maxrss; every shape runs against one mock process (itl 1 ms, page size 16, its default cache of 4M tokens), llama2 tokenizer, answers of 2 tokens.",
      "Replays: Mooncake traces of four-turn conversations under 8 system prompts, --ignore-timestamps --max-concurrency 64; WEKA corpora of 64-token blocks (root chains growing by appending, one subagent each), --time-scale 0.01, in --sessions lanes (more lanes than traces: clones). Their shapes (requests, chain hash ids, kept-block tokens, working-set tokens) are in details.",
      "The model's terms (src/config/memory-model.ts) were fitted to these shapes; the pre-check refuses a run whose estimate is over half the machine's memory.",
    ],
    trials: [],
    figures: { "worst ratio": worst },
    details,
    elapsedS: (performance.now() - t0) / 1000,
  };
}
