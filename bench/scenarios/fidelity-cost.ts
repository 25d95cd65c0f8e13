/**
 * What --check-fidelity costs: the same sweep against the same mock with and without it, side by side in one run.
 * Measured: the requests the mock received and the flushes it did (the check's extra ones are exactly two flushes and
 * three requests a sample), the wall time of each run, and that the measured line's prompts and counts are the same.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { parseJsonlLine } from "../../src/report/jsonl.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const TOTAL = 2000;
const OUT = 32;
const PCTS = [50, 90];
const SAMPLE = 4;

interface Side {
  label: string;
  requests: number;
  flushes: number;
  wallS: number;
  measured: string;
}

export async function runFidelityCost(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const n = ctx.quick ? 16 : 64;
  const dir = mkdtempSync(join(ctx.workDir, "fidelity-cost-"));
  const sides: Side[] = [];
  for (const [label, extra] of [
    ["without", []],
    ["with --check-fidelity", ["--check-fidelity", "--fidelity-sample", String(SAMPLE)]],
  ] as const) {
    const mock = await startMock(ctx.bin, join(dir, `truth-${sides.length}.jsonl`), [
      "--ttft-base-ms",
      "20",
      "--itl-ms",
      "5",
      "--prefill-us-per-token",
      "20",
      "--page-size",
      "16",
    ]);
    const out = join(dir, `run-${sides.length}.jsonl`);
    try {
      const started = performance.now();
      const r = await runBounded(
        [
          ctx.bin,
          "run",
          "--model",
          ctx.tokenizers.llama2,
          "--base-url",
          mock.url,
          "--total-tokens",
          String(TOTAL),
          "--output-len",
          String(OUT),
          "--pcts",
          PCTS.join(","),
          "--num-prompts",
          String(n),
          "--max-concurrency",
          "8",
          "--settle",
          "0",
          "--quiet",
          "--output-file",
          out,
          ...extra,
        ],
        { timeoutMs: 300_000 },
      );
      const wallS = (performance.now() - started) / 1000;
      const stats = (await (await fetch(`${mock.url}/mock/stats`)).json()) as { generateRequests: number; flushes: number };
      const lines = readIfExists(out)
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => parseJsonlLine(l));
      if (r.code !== 0) progress(`fidelity-cost: ${label}: exit ${r.code}`);
      sides.push({
        label,
        requests: stats.generateRequests,
        flushes: stats.flushes,
        wallS,
        measured: JSON.stringify(lines.map((l) => [l.workload?.prompt_ids_hash, l.completed, l.total_input, l.total_output, l.mean_cached_tokens])),
      });
      progress(`fidelity-cost: ${label}: ${stats.generateRequests} requests, ${stats.flushes} flushes, ${fmt(wallS, 2)} s`);
    } finally {
      await mock.stop();
    }
  }
  const [off, on] = sides as [Side, Side];
  const lines = PCTS.length;
  const extraRequests = on.requests - off.requests;
  const extraFlushes = on.flushes - off.flushes;
  const targets: TargetCheck[] = [
    {
      target: `the check adds exactly 3 requests and 2 flushes a sample (${SAMPLE} samples on each of ${lines} lines)`,
      measured: `+${extraRequests} requests, +${extraFlushes} flushes`,
      pass: extraRequests === 3 * SAMPLE * lines && extraFlushes === 2 * SAMPLE * lines,
    },
    {
      target: "the measured lines' prompts and counts are those of the run without the check",
      measured: on.measured === off.measured ? "identical" : "different",
      pass: on.measured === off.measured,
    },
  ];
  return {
    name: "fidelity-cost",
    title: `The cost of --check-fidelity (${SAMPLE} samples a line): one sweep of ${n} prompts x ${TOTAL} tokens -> ${OUT}, pcts ${PCTS.join(", ")}, against the mock, with and without the check`,
    columns: ["run", "requests the mock received", "flushes", "wall s"],
    rows: sides.map((s) => [s.label, String(s.requests), String(s.flushes), fmt(s.wallS, 2)]),
    targets,
    notes: [
      `Per sample: a flush, the cold answer, a flush, the prefix alone, the warm answer (${OUT} tokens each, not streamed): +${fmt((on.wallS - off.wallS) / (SAMPLE * lines), 3)} s a sample here, of which the mock's own prefill and decode are most.`,
      "The check runs after each line's measurement and before the next line's flush, so nothing it sends is measured.",
    ],
    trials: [],
    figures: { extraRequests, extraFlushes, wallOffS: off.wallS, wallOnS: on.wallS },
    details: { sides },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
