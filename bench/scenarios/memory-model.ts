/**
 * The memory model (src/config/memory-model.ts) against the compiled binary's measured peak: each shape is run
 * against a mock process, its peak resident memory (VmHWM of the process tree, sampled, and rusage maxrss, the
 * larger) compared with the model's estimate for the same flags. The target: every shape within 1.5x either way, so
 * the pre-check that refuses a run before anything is sent (config/bounds.ts checkMemory) neither lets a run that
 * would take the machine through nor refuses one that fits.
 */
import { join } from "node:path";
import { multiturnMemoryBytes, sweepMemoryBytes } from "../../src/config/memory-model.ts";
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

function shapes(quick: boolean): Shape[] {
  const s = quick ? 4 : 1;
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
    for (const shape of shapes(ctx.quick)) {
      const base = ["--model", ctx.tokenizers.llama2, "--base-url", mock.url, "--settle", "0", "--quiet", "--output-len", "2"];
      const cmd = shape.args[0] === "multiturn" ? [ctx.bin, "multiturn", ...base, ...shape.args.slice(1)] : [ctx.bin, ...base, ...shape.args];
      const r = await runBounded(cmd, { timeoutMs: 300_000 });
      if (r.code !== 0) throw new Error(`memory-model: ${shape.label} exited ${r.code}: ${r.stderrTail.slice(-400)}`);
      const peakBytes = Math.max(r.sampler.hwmKb * 1024, r.maxRssMiB * MIB);
      const ratio = shape.estimateBytes / peakBytes;
      ratios.push(ratio);
      details[shape.label] = { peakBytes, estimateBytes: shape.estimateBytes, ratio, wallMs: r.wallMs };
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
      "Peak: the larger of the process tree's VmHWM (sampled every 100 ms) and rusage maxrss; every shape runs against one mock process (itl 1 ms), llama2 tokenizer, answers of 2 tokens.",
      "The model's terms (src/config/memory-model.ts) were fitted to these shapes; the pre-check refuses a run whose estimate is over half the machine's memory.",
    ],
    trials: [],
    figures: { "worst ratio": worst },
    details,
    elapsedS: (performance.now() - t0) / 1000,
  };
}
