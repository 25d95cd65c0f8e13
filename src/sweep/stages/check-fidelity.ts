/**
 * Stage (--check-fidelity): after a line's measurement, its cache-fidelity check (src/engine/fidelity-check.ts) on
 * `sample` prompts shaped as the line's: each shares one of the working set's prefixes (in turn) and has a suffix of
 * its own, drawn from a stream seeded apart from the measured prompts' (seed + line), so the measured prompts, their
 * draw order and the line's figures are exactly those of a run without the check.
 */
import { PyRandom } from "../../workload/rng.ts";
import { checkFidelity, fidelityOptions, type FidelitySample } from "../../engine/fidelity-check.ts";
import type { FidelityGroup } from "../../metrics/fidelity.ts";
import type { SweepContext } from "../context.ts";
import type { CellPlan } from "../plan.ts";
import type { PromptBatch } from "./build-prompts.ts";

/** Keeps the samples' stream apart from the measured prompts' (Python's random.Random(seed) for any int seed). */
const SAMPLE_SEED_OFFSET = 0x5eed_f1de;

export async function checkLineFidelity(plan: CellPlan, batch: PromptBatch, ctx: SweepContext, lineIndex: number): Promise<FidelityGroup | null> {
  const f = ctx.opts.fidelity;
  if (f === undefined) return null;
  const rng = new PyRandom(ctx.opts.seed + BigInt(SAMPLE_SEED_OFFSET + lineIndex));
  const samples: FidelitySample[] = [];
  for (let i = 0; i < f.sample; i++) {
    const prefix = batch.prefixes[plan.groupOf(i)] ?? new Uint32Array(0);
    const ids = new Uint32Array(prefix.length + plan.suffixLen);
    ids.set(prefix, 0);
    rng.choicesInto(ctx.tokenizer.population, ids, prefix.length, plan.suffixLen);
    samples.push({ ids: [...ids], prefixLen: prefix.length });
  }
  return checkFidelity({ backend: ctx.backend, ctl: ctx.ctl }, samples, fidelityOptions(ctx, ctx.opts.outputLen));
}
