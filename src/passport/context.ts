/**
 * What every passport measurement uses: one prompt of token ids (pinned to a slot on a per-slot server),
 * answered with its cached tokens (and their device part), its TTFT and its generated ids; a flush; fresh random
 * prompts from their own seeded stream (no two share a first token by chance: the first token of each is unique).
 */
import { bodyParts } from "../backends/body.ts";
import type { Control } from "../backends/http.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import { streamRequest } from "../client/stream.ts";
import type { RunOptions } from "../config/options.ts";
import { resolveTurnOutput } from "../engine/output-ids.ts";
import { streamRequestFor } from "../engine/request.ts";
import { interruptedError } from "../interrupt.ts";
import { PyRandom } from "../workload/rng.ts";
import { serializeIds } from "../workload/prompts.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";

export interface PassportContext {
  backend: Backend;
  ctl: Control;
  server: ServerProfile;
  tokenizer: LoadedTokenizer;
  opts: Pick<RunOptions, "baseUrl" | "requestTimeoutS" | "stallTimeoutS" | "extraRequestBody" | "flushDeadlineS" | "flushServerTimeoutS" | "seed">;
  io: { signal?: AbortSignal };
  /** Requests sent so far, and the failures among them (a passport with one is no passport: exit 3). */
  sent: { count: number; failures: string[] };
}

export interface Answer {
  ok: boolean;
  failure: string;
  /** -1: not reported. */
  cachedTokens: number;
  /** The first tier's part of them; -1: the server reports no tiers. */
  cachedDeviceTokens: number;
  ttftMs: number;
  /** When it was sent, its first token came and it ended, on the client's clock (ms). */
  startMs: number;
  firstTokenMs: number;
  endMs: number;
  /** The generated ids (null when the server streams none, or one token was asked). */
  outputIds: Uint32Array | null;
}

/** Sends `ids` (greedy, `maxNewTokens`, pinned to `slot` where the server has per-slot caches). */
/** `expectOk` false: a refusal is an answer (the slots' context search sends prompts that may be too long). */
export async function ask(ctx: PassportContext, ids: Uint32Array, maxNewTokens = 1, slot: number | null = pinnedSlot(ctx), expectOk = true): Promise<Answer> {
  const template = ctx.backend.createBodyTemplate({ maxNewTokens, ignoreEos: true, extra: ctx.opts.extraRequestBody, model: ctx.server.model, slot });
  const body = bodyParts(template, serializeIds(ids), new Uint8Array(0));
  ctx.sent.count++;
  const rec = await streamRequest({ ...streamRequestFor(ctx, body, { index: -3, promptLen: ids.length, maxNewTokens }), keepPayloads: maxNewTokens > 1 });
  // The run's interrupt ends the passport (exit 130), never reads as a failed request of a figure.
  if (rec.failureKind === "cancelled") throw interruptedError("during the passport's measurements");
  const outputIds = maxNewTokens > 1 && rec.ok ? resolveTurnOutput(rec, ctx.backend, ctx.server.textMode, ctx.tokenizer) : null;
  if (!rec.ok && expectOk) ctx.sent.failures.push(`${rec.failureKind}: ${rec.failureMessage}`);
  return {
    ok: rec.ok,
    failure: rec.ok ? "" : `${rec.failureKind}: ${rec.failureMessage}`,
    cachedTokens: rec.cachedTokens,
    cachedDeviceTokens: rec.cachedDeviceTokens,
    ttftMs: rec.ttftMs,
    startMs: rec.startMs,
    firstTokenMs: rec.ok ? rec.startMs + rec.ttftMs : 0,
    endMs: rec.startMs + rec.latencyMs,
    outputIds: outputIds === null || outputIds.approximate ? null : outputIds.ids,
  };
}

/** A per-slot server's requests all go to slot 0 (a slot's cache is the one measured); others are not pinned. */
const pinnedSlot = (ctx: Pick<PassportContext, "server">): number | null => ((ctx.server.cacheSlots ?? null) === null ? null : 0);

export async function flush(ctx: PassportContext): Promise<void> {
  await ctx.backend.flush(ctx.ctl, { deadlineS: ctx.opts.flushDeadlineS, serverTimeoutS: ctx.opts.flushServerTimeoutS });
}

/** Fresh prompts: random ids, each starting with an id no other prompt of this passport starts with. */
export class PromptDraws {
  private readonly rng: PyRandom;
  private next = 0;

  constructor(
    private readonly population: Uint32Array,
    seed: bigint,
  ) {
    this.rng = new PyRandom(seed + 0x9a55_90a7n);
  }

  draw(length: number): Uint32Array {
    const ids = new Uint32Array(length);
    this.rng.choicesInto(this.population, ids, 0, length);
    ids[0] = this.population[this.next++ % this.population.length]!;
    return ids;
  }
}

/** `a` followed by `b`. */
export function joined(a: ArrayLike<number>, b: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  out.set(a as Uint32Array, 0);
  out.set(b as Uint32Array, a.length);
  return out;
}
