/**
 * Stage: the pct's prompts, in the script's draw order (the prefix, then each suffix). The prompt worker draws the
 * prefix now; each line then gets its prompts just in time, drawn and serialized on the worker's thread a bounded
 * look-ahead before they are sent, so memory follows what is in flight rather than the number of prompts, and no
 * request's clock or other stream's event waits for a serialization. Every line of a pct sends the same prompts.
 */
import { log } from "../../log.ts";
import { bodyParts, type BodyTemplate } from "../../backends/body.ts";
import { ReleasingBody } from "../../client/request-body.ts";
import type { PromptPass } from "../../workload/prompt-feed.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { probeLength } from "./reset-cache.ts";

/** The pct's prompts, ready to send. */
export interface PromptBatch {
  /** The shared prefix's ids. */
  prefix: Uint32Array;
  /** Body of the prefix-only warm request (max 1 new token); null when the prefix is empty. */
  warmBody: readonly Uint8Array[] | null;
  /** The first `count` prompts for one line, in order, each body built as its prompt arrives. */
  openLine(count: number): LinePrompts;
  /** The first ids of a prompt (the flush probe's length) from its suffix's head. */
  probeIds(suffixHead: Uint32Array): Uint32Array;
}

/** One line's prompts, arriving in order from the worker. */
export interface LinePrompts {
  /** Prompt `index` has arrived (prompts are taken in order). */
  ready(index: number): boolean;
  /** The request body of prompt `index`, the next in order; its memory is given back as it goes out. */
  body(index: number): { body: ReleasingBody; suffixHead: Uint32Array };
  /** Called when a prompt arrives, or when the worker failed (then `failure` is set). */
  onArrival(listener: () => void): void;
  readonly failure: Error | null;
  /** Resolves once the look-ahead is full: call before the clock starts. */
  filled(): Promise<void>;
  close(): void;
}

export async function buildPromptBatch(plan: PctPlan, ctx: SweepContext): Promise<PromptBatch> {
  const { opts, backend, server } = ctx;
  log.info(`Drawing the shared prefix (${plan.prefixLen} tokens); ${plan.numPrompts} prompts follow just in time ...`);
  const headLen = probeLength(server.pageSize);
  const drawn = await ctx.prompts.startPct({
    pct: plan.pct,
    totalTokens: plan.promptLen,
    count: plan.numPrompts,
    headLen,
    dumpPath: opts.dumpPrompts,
  });
  const ignoreEos = !opts.disableIgnoreEos;
  const measured = backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody, model: server.model });
  const warm = backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody, model: server.model });
  return {
    prefix: drawn.prefix,
    warmBody: plan.prefixLen > 0 ? bodyParts(warm, drawn.prefixDigits, new Uint8Array(0)) : null,
    openLine: (count) => lineOf(ctx.prompts.openPass(count), measured, drawn.prefixDigits),
    probeIds: (suffixHead) => {
      const ids = new Uint32Array(Math.min(headLen, drawn.prefix.length + suffixHead.length));
      ids.set(drawn.prefix.subarray(0, ids.length));
      if (drawn.prefix.length < ids.length) ids.set(suffixHead.subarray(0, ids.length - drawn.prefix.length), drawn.prefix.length);
      return ids;
    },
  };
}

function lineOf(pass: PromptPass, template: BodyTemplate, prefixDigits: Uint8Array): LinePrompts {
  return {
    ready: (index) => pass.ready(index),
    body: () => {
      const { prompt, release } = pass.take();
      return { body: new ReleasingBody(bodyParts(template, prefixDigits, prompt.chunks), release), suffixHead: prompt.head };
    },
    onArrival: (listener) => pass.onArrival(listener),
    get failure() {
      return pass.failure;
    },
    filled: () => pass.filled(),
    close: () => pass.close(),
  };
}
