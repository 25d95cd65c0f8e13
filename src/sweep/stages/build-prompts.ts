/**
 * Stage: build the pct's prompts in the script's draw order (prefix, then each suffix) and serialize them, before
 * any clock starts: the prefix once, each suffix once, so a request body is a few shared views.
 */
import { appendFileSync } from "node:fs";
import { log } from "../../log.ts";
import { bodyParts } from "../../backends/body.ts";
import { buildPrompts, formatPromptDump, promptIds, serializeIds, suffixIds, type PromptSet } from "../../workload/prompts.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";

/** The pct's prompts, ready to send. */
export interface PromptBatch {
  set: PromptSet;
  /** Body of the prefix-only warm request (max 1 new token); null when the prefix is empty. */
  warmBody: readonly Uint8Array[] | null;
  /** Body of measured prompt i. */
  body(index: number): readonly Uint8Array[];
  /** Ids of measured prompt i (a copy). */
  ids(index: number): Uint32Array;
}

export function buildPromptBatch(plan: PctPlan, ctx: SweepContext): PromptBatch {
  const { opts, backend, server } = ctx;
  log.info(`Building ${plan.numPrompts} prompts ...`);
  const set = buildPrompts({ population: ctx.tokenizer.population, totalTokens: plan.promptLen, pct: plan.pct, numPrompts: plan.numPrompts, rng: ctx.rng });
  if (opts.dumpPrompts) appendFileSync(opts.dumpPrompts, formatPromptDump(set));

  const ignoreEos = !opts.disableIgnoreEos;
  const measured = backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody, model: server.model });
  const warm = backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody, model: server.model });
  const prefixDigits = serializeIds(set.prefix);
  const suffixDigits: Uint8Array[] = [];
  for (let i = 0; i < set.numPrompts; i++) suffixDigits.push(serializeIds(suffixIds(set, i)));
  const empty = new Uint8Array(0);
  return {
    set,
    warmBody: plan.prefixLen > 0 ? bodyParts(warm, prefixDigits, empty) : null,
    body: (i) => bodyParts(measured, prefixDigits, suffixDigits[i] ?? empty),
    ids: (i) => promptIds(set, i),
  };
}
