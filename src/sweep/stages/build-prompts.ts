/**
 * Stage: the pct's prompts, in the script's draw order (the working set's prefixes, then each suffix).
 *
 * Token-id prompts come from the prompt worker: it draws the prefixes now, and each line then gets its prompts just
 * in time, drawn and serialized on the worker's thread a bounded look-ahead before they are sent, so memory follows
 * what is in flight rather than the number of prompts, and no request's clock or other stream's event waits for a
 * serialization. Text prompts (chat) need the tokenizer's decode and the prefix-drift check over the whole set
 * (text-prompts.ts), so they are built at once on this thread, before any clock starts. Either way every line of a
 * pct sends the same prompts, and a shard sends its share of them (prompts rank, rank + size, ...).
 */
import { abortable } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { bodyParts, serializeText, type BodyTemplate } from "../../backends/body.ts";
import { ReleasingBody, type RequestBody } from "../../client/request-body.ts";
import type { PromptPass } from "../../workload/prompt-feed.ts";
import { buildPrompts, formatPromptDump, prefixIndexOf, promptIds, suffixIds } from "../../workload/prompts.ts";
import { buildTextPrompts, type TextPrompts } from "../../workload/text-prompts.ts";
import { probeLength } from "../../engine/reset-cache.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan, CellPlan } from "../plan.ts";

/** The pct's prompts, ready to send. */
export interface PromptBatch {
  /** The working set's prefixes (one without --working-set). */
  prefixes: readonly Uint32Array[];
  /**
   * Body of a prefix-only warm request (max 1 new token) for prefix `prefix` of the working set, pinned to a cache slot
   * or not; null when the prefix is empty.
   */
  warmBody(prefix: number, slot: number | null): readonly Uint8Array[] | null;
  /** This process's prompts of one line, in send order (plan.indicesOf(line)), each body built as it arrives. */
  openLine(line: LinePlan): LinePrompts;
  /** The first ids of prompt `index` (the flush probe's length), from its suffix's head. */
  probeIds(index: number, suffixHead: Uint32Array): Uint32Array;
  /** promptIdsHash of the pct's prompts (the workload fingerprint). */
  idsHash: string;
  /** Text prompts and their drift check; null when the prompts go out as token ids. */
  text: TextPrompts | null;
}

/** One line's prompts, by position in the line's send order, arriving in order. */
export interface LinePrompts {
  /** The prompt at `position` has arrived (prompts are taken in order). */
  ready(position: number): boolean;
  /** The request body at `position`, the next in order; its memory is given back as it goes out. */
  body(position: number): { body: RequestBody; suffixHead: Uint32Array };
  /** Called when a prompt arrives, or when the worker failed (then `failure` is set). */
  onArrival(listener: () => void): void;
  readonly failure: Error | null;
  /** Resolves once the look-ahead is full: call before the clock starts. */
  filled(): Promise<void>;
  close(): void;
}

export async function buildPromptBatch(plan: CellPlan, ctx: SweepContext): Promise<PromptBatch> {
  return ctx.prompts === null ? buildAtOnce(plan, ctx) : await buildJustInTime(plan, ctx);
}

function templates(ctx: SweepContext): { measured: BodyTemplate; warm: (slot: number | null) => BodyTemplate } {
  const { opts, backend, server } = ctx;
  const ignoreEos = !opts.disableIgnoreEos;
  return {
    measured: backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody, model: server.model }),
    warm: (slot) => backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody, model: server.model, slot }),
  };
}

/** The first `length` ids of a prompt made of `prefix` then a suffix starting with `suffixHead`. */
function headOf(prefix: Uint32Array, suffixHead: Uint32Array, length: number): Uint32Array {
  const ids = new Uint32Array(Math.min(length, prefix.length + suffixHead.length));
  ids.set(prefix.subarray(0, ids.length));
  if (prefix.length < ids.length) ids.set(suffixHead.subarray(0, ids.length - prefix.length), prefix.length);
  return ids;
}

async function buildJustInTime(plan: CellPlan, ctx: SweepContext): Promise<PromptBatch> {
  const feed = ctx.prompts!;
  const what = plan.workingSet > 1 ? `${plan.workingSet} shared prefixes` : "the shared prefix";
  log.info(`Drawing ${what} (${plan.prefixLen} tokens); ${plan.numPrompts} prompts follow just in time ...`);
  const headLen = probeLength(ctx.server.pageSize);
  const drawn = await abortable(
    feed.startPct({
      pct: plan.pct,
      totalTokens: plan.promptLen,
      workingSet: plan.workingSet,
      count: plan.numPrompts,
      groups: plan.groups,
      headLen,
      // --dump-prompts: the worker hands the ids over as it draws them, the sink writes them.
      dump: ctx.opts.dumpPrompts === null ? null : (bytes) => ctx.io.sink.prompts(bytes),
    }),
    ctx.io.signal,
    `while drawing ${what}`,
  );
  const { measured, warm } = templates(ctx);
  const empty = new Uint8Array(0);
  return {
    prefixes: drawn.prefixes,
    warmBody: (prefix, slot) => (plan.prefixLen > 0 ? bodyParts(warm(slot), drawn.prefixDigits[prefix] as Uint8Array, empty) : null),
    openLine: (line) => {
      const share = plan.share;
      const pass = feed.openPass({ count: line.count, first: share?.rank ?? 0, step: share?.size ?? 1 });
      return passLine(pass, measured, (position) => drawn.prefixDigits[plan.groupOf(plan.indexAt(position))] as Uint8Array);
    },
    probeIds: (index, suffixHead) => headOf(drawn.prefixes[plan.groupOf(index)] as Uint32Array, suffixHead, headLen),
    idsHash: drawn.idsHash,
    text: null,
  };
}

function passLine(pass: PromptPass, template: BodyTemplate, prefixDigitsAt: (position: number) => Uint8Array): LinePrompts {
  return {
    ready: (position) => pass.ready(position),
    body: (position) => {
      const { prompt, release } = pass.take();
      return { body: new ReleasingBody(bodyParts(template, prefixDigitsAt(position), prompt.chunks), release), suffixHead: prompt.head };
    },
    onArrival: (listener) => pass.onArrival(listener),
    get failure() {
      return pass.failure;
    },
    filled: () => pass.filled(),
    close: () => pass.close(),
  };
}

/** Text prompts: every prompt drawn, decoded and checked now (options refuse a working set with them). */
function buildAtOnce(plan: CellPlan, ctx: SweepContext): PromptBatch {
  const { opts } = ctx;
  log.info(`Building ${plan.numPrompts} prompts ...`);
  const set = buildPrompts({
    population: ctx.tokenizer.population,
    totalTokens: plan.promptLen,
    pct: plan.pct,
    numPrompts: plan.numPrompts,
    rng: ctx.rng,
    workingSet: plan.workingSet,
  });
  if (opts.dumpPrompts) ctx.io.sink.prompts(formatPromptDump(set));
  const text = buildTextPrompts(set, ctx.tokenizer);
  logDrift(plan, text);
  const prefixParts = set.prefixes.map(() => serializeText(text.prefixText));
  const suffixParts = text.suffixTexts.map((suffix) => serializeText(suffix));
  const { measured, warm } = templates(ctx);
  const empty = new Uint8Array(0);
  const headLen = probeLength(ctx.server.pageSize);
  return {
    prefixes: set.prefixes,
    warmBody: (prefix, slot) => (plan.prefixLen > 0 ? bodyParts(warm(slot), prefixParts[prefix] as Uint8Array, empty) : null),
    openLine: () => ({
      ready: () => true,
      body: (position) => {
        const i = plan.indexAt(position);
        const body = bodyParts(measured, prefixParts[prefixIndexOf(set, i)] as Uint8Array, suffixParts[i] ?? empty);
        return { body, suffixHead: suffixIds(set, i).subarray(0, headLen) };
      },
      onArrival: () => {},
      failure: null,
      filled: async () => {},
      close: () => {},
    }),
    probeIds: (index) => promptIds(set, index).slice(0, headLen),
    idsHash: set.idsHash,
    text,
  };
}

function logDrift(plan: CellPlan, text: TextPrompts): void {
  if (plan.prefixLen === 0) return;
  let min = Infinity;
  for (const shared of text.sharedTokens) min = Math.min(min, shared);
  const moved =
    text.prefixDriftAt >= 0 ? `re-tokenizes to ${text.prefixTokens} tokens (ids differ from position ${text.prefixDriftAt})` : "re-tokenizes to the same ids";
  log.info(`text prompts: the ${plan.prefixLen}-id prefix ${moved}; every prompt shares at least ${min} of them`);
}
