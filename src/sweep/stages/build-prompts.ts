/**
 * Stage: build the pct's prompts in the script's draw order (prefix, then each suffix) and serialize them, before
 * any clock starts: the prefix once, each suffix once, so a request body is a few shared views. A backend that takes
 * text (chat) gets each part as the text its ids decode to, with the prefix-drift check of text-prompts.ts.
 */
import { appendFileSync } from "node:fs";
import { log } from "../../log.ts";
import { bodyParts, serializeText } from "../../backends/body.ts";
import { buildPrompts, formatPromptDump, prefixIndexOf, promptIds, serializeIds, suffixIds, type PromptSet } from "../../workload/prompts.ts";
import { buildTextPrompts, type TextPrompts } from "../../workload/text-prompts.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";

/** The pct's prompts, ready to send. */
export interface PromptBatch {
  set: PromptSet;
  /**
   * Body of a prefix-only warm request (max 1 new token) for prefix `prefix` of the working set, pinned to a cache slot
   * or not; null when the prefix is empty.
   */
  warmBody(prefix: number, slot: number | null): readonly Uint8Array[] | null;
  /** Prefixes in the working set. */
  prefixCount: number;
  /** Body of measured prompt i. */
  body(index: number): readonly Uint8Array[];
  /** Ids of measured prompt i (a copy). */
  ids(index: number): Uint32Array;
  /** Text prompts and their drift check; null when the prompts go out as token ids. */
  text: TextPrompts | null;
}

export function buildPromptBatch(plan: PctPlan, ctx: SweepContext): PromptBatch {
  const { opts, backend, server } = ctx;
  log.info(`Building ${plan.numPrompts} prompts ...`);
  const set = buildPrompts({
    population: ctx.tokenizer.population, totalTokens: plan.promptLen, pct: plan.pct, numPrompts: plan.numPrompts, rng: ctx.rng,
    workingSet: plan.workingSet,
  });
  if (opts.dumpPrompts) appendFileSync(opts.dumpPrompts, formatPromptDump(set));

  const ignoreEos = !opts.disableIgnoreEos;
  const measured = backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody, model: server.model });
  const warmTemplate = (slot: number | null) =>
    backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody, model: server.model, slot });
  let text: TextPrompts | null = null;
  let prefixParts: Uint8Array[];
  const suffixParts: Uint8Array[] = [];
  if (backend.promptEncoding === "text") {
    // Options refuse a working set with text prompts: the one prefix is set.prefix.
    text = buildTextPrompts(set, ctx.tokenizer);
    logDrift(plan, text);
    prefixParts = [serializeText(text.prefixText)];
    for (const suffix of text.suffixTexts) suffixParts.push(serializeText(suffix));
  } else {
    prefixParts = set.prefixes.map((prefix) => serializeIds(prefix));
    for (let i = 0; i < set.numPrompts; i++) suffixParts.push(serializeIds(suffixIds(set, i)));
  }
  const empty = new Uint8Array(0);
  return {
    set,
    prefixCount: prefixParts.length,
    warmBody: (prefix, slot) => (plan.prefixLen > 0 ? bodyParts(warmTemplate(slot), prefixParts[prefix] as Uint8Array, empty) : null),
    body: (i) => bodyParts(measured, prefixParts[prefixIndexOf(set, i) % prefixParts.length] as Uint8Array, suffixParts[i] ?? empty),
    ids: (i) => promptIds(set, i),
    text,
  };
}

/** One prompt part (a probe's or a canary's ids) as the backend takes it: the ids, or the text they decode to. */
export function promptPart(ids: Uint32Array, ctx: SweepContext): Uint8Array {
  return ctx.backend.promptEncoding === "text" ? serializeText(ctx.tokenizer.decode(ids)) : serializeIds(ids);
}

function logDrift(plan: PctPlan, text: TextPrompts): void {
  if (plan.prefixLen === 0) return;
  let min = Infinity;
  for (const shared of text.sharedTokens) min = Math.min(min, shared);
  const moved = text.prefixDriftAt >= 0 ? `re-tokenizes to ${text.prefixTokens} tokens (ids differ from position ${text.prefixDriftAt})` : "re-tokenizes to the same ids";
  log.info(`text prompts: the ${plan.prefixLen}-id prefix ${moved}; every prompt shares at least ${min} of them`);
}
