/**
 * The first tier's capacity, and what follows from it. A trial of fill F: flush; a probe prompt P of S tokens
 * (whole pages); prompts of their own adding up to F tokens (whole pages, one output token each, so nothing but
 * prompts is cached); P again: intact (its device part all S tokens) while S + F fit. Exponential steps find a fill
 * that evicts, bisection (to one page) the last that does not: capacity = S + F. With a second tier, P's evicted
 * pages come back from it: the same search on P's total cached tokens gives the tiers' combined capacity.
 */
import { BenchError } from "../errors.ts";
import { interruptedError, isInterrupt } from "../interrupt.ts";
import type { PassportFigure } from "../schema/passport.ts";
import { ask, flush, joined, type PassportContext, type PromptDraws } from "./context.ts";

/** The probe prompt and the fills: long enough to keep trials few, a whole number of pages. */
const chunkTokens = (page: number): number => Math.max(page, Math.floor(1024 / page) * page);

type Tier = "device" | "total";

/** Sends F tokens of fill in whole-page prompts of at most `chunk` tokens. */
async function fill(ctx: PassportContext, draws: PromptDraws, tokens: number, chunk: number): Promise<void> {
  for (let left = tokens; left > 0; left -= chunk) {
    const r = await ask(ctx, draws.draw(Math.min(chunk, left)));
    if (!r.ok) throw new BenchError(`a fill prompt failed: ${r.failure}`);
  }
}

/**
 * A figure that needs the server's cached tokens cannot be measured without them: no answer is read as "evicted" or
 * "not cached" when the server said nothing.
 */
class Unreported extends Error {}
export const UNREPORTED = "the server reports no cached tokens, so nothing about its cache can be seen from outside";

/** The cached tokens an answer reported (its device part where tiers are reported); throws Unreported when none. */
function reported(a: { cachedTokens: number; cachedDeviceTokens: number }): { device: number; total: number } {
  if (a.cachedTokens < 0) throw new Unreported(UNREPORTED);
  return { device: a.cachedDeviceTokens >= 0 ? a.cachedDeviceTokens : a.cachedTokens, total: a.cachedTokens };
}

/** `f`'s figure, or not measured where the server reported no cached tokens. */
async function unlessUnreported<T>(method: string, f: () => Promise<PassportFigure<T>>): Promise<PassportFigure<T>> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof Unreported) return { value: null, method, uncertainty: null, why: err.message };
    throw err;
  }
}

/** One trial: is P intact (in `tier`) after F tokens of fill? Also the TTFT of its re-send and where it came from. */
async function trial(
  ctx: PassportContext,
  draws: PromptDraws,
  fillTokens: number,
  chunk: number,
  tier: Tier,
): Promise<{ intact: boolean; ttftMs: number; device: number; total: number }> {
  await flush(ctx);
  const p = draws.draw(chunk);
  const first = await ask(ctx, p);
  if (!first.ok) throw new BenchError(`the probe prompt failed: ${first.failure}`);
  await fill(ctx, draws, fillTokens, chunk);
  // P plus a token of its own: the whole of P can come back cached (a server serves at most the prompt less one).
  const again = await ask(ctx, joined(p, draws.draw(1)));
  if (!again.ok) throw new BenchError(`the probe prompt's re-send failed: ${again.failure}`);
  const { device, total } = reported(again);
  return { intact: (tier === "device" ? device : total) >= chunk, ttftMs: again.ttftMs, device, total };
}

/** The most fill at which P stays intact, to a page, searched up to `maxTokens`; null fill: P never evicted (a lower bound). */
async function search(ctx: PassportContext, draws: PromptDraws, page: number, maxTokens: number, tier: Tier): Promise<{ tokens: number; bounded: boolean }> {
  const chunk = chunkTokens(page);
  // Without any fill the probe must come back whole: else the server keeps no prefix at all, and no capacity is seen.
  if (!(await trial(ctx, draws, 0, chunk, tier)).intact)
    throw new Unreported(`the probe prompt did not come back cached even without a fill: no prefix cache to measure`);
  let good = 0;
  let bad: number | null = null;
  try {
    for (let f = chunk; chunk + f <= maxTokens; f *= 2) {
      if ((await trial(ctx, draws, f, chunk, tier)).intact) good = f;
      else {
        bad = f;
        break;
      }
    }
    if (bad === null) return { tokens: chunk + good, bounded: true };
    while (bad - good > page) {
      const mid: number = good + Math.max(page, Math.floor((bad - good) / 2 / page) * page);
      if ((await trial(ctx, draws, mid, chunk, tier)).intact) good = mid;
      else bad = mid;
    }
    return { tokens: chunk + good, bounded: false };
  } catch (err) {
    // Interrupted mid-search: what the trials so far found is said, not lost.
    if (!isInterrupt(err)) throw err;
    const upper = bad === null ? "no fill evicted it yet" : `evicted at ${chunk + bad}`;
    throw interruptedError(
      `during the ${tier === "device" ? "" : "second tier's "}capacity search (so far: the probe stayed whole up to ${chunk + good} tokens, ${upper})`,
    );
  }
}

const CAPACITY_METHOD = (page: number) =>
  `a probe prompt of ${chunkTokens(page)} tokens, then fills of fresh prompts (whole pages, one output token): the most fill after which the probe comes back whole, found by doubling then bisection to a page`;

export async function measureCapacity(ctx: PassportContext, draws: PromptDraws, page: number, maxTokens: number): Promise<PassportFigure<number>> {
  return unlessUnreported(CAPACITY_METHOD(page), async () => {
    const found = await search(ctx, draws, page, maxTokens, "device");
    return {
      value: found.tokens,
      method: CAPACITY_METHOD(page),
      uncertainty: found.bounded ? `a lower bound: nothing was evicted up to --max-tokens ${maxTokens}` : `-0/+${page} tokens (one page)`,
      why: null,
    };
  });
}

/** Does a second tier serve what the first evicted, how much do both hold, and how fast is a hit from each? */
type SecondTier = {
  present: boolean;
  total_capacity_tokens: number | null;
  ttft_device_hit_ms: number | null;
  ttft_second_tier_hit_ms: number | null;
  ttft_cold_ms: number | null;
};

export async function measureSecondTier(
  ctx: PassportContext,
  draws: PromptDraws,
  page: number,
  capacity: number,
  maxTokens: number,
): Promise<PassportFigure<SecondTier>> {
  const method =
    "the capacity search's probe re-sent after a fill that evicts it from the first tier: cached tokens still reported (from another tier) or not; then the same search on its total cached tokens";
  return unlessUnreported<SecondTier>(method, async () => {
    const chunk = chunkTokens(page);
    const beyond = Math.max(chunk, capacity);
    const evicted = await trial(ctx, draws, beyond, chunk, "device");
    const hit = await trial(ctx, draws, 0, chunk, "device");
    await flush(ctx);
    const cold = await ask(ctx, draws.draw(chunk + 1));
    if (evicted.total < chunk) {
      return {
        value: { present: false, total_capacity_tokens: null, ttft_device_hit_ms: hit.ttftMs, ttft_second_tier_hit_ms: null, ttft_cold_ms: cold.ttftMs },
        method,
        uncertainty: null,
        why: null,
      };
    }
    const total = await search(ctx, draws, page, maxTokens, "total");
    return {
      value: {
        present: true,
        total_capacity_tokens: total.tokens,
        ttft_device_hit_ms: hit.ttftMs,
        ttft_second_tier_hit_ms: evicted.ttftMs,
        ttft_cold_ms: cold.ttftMs,
      },
      method,
      uncertainty: total.bounded ? `total capacity a lower bound (--max-tokens ${maxTokens})` : `total capacity -0/+${page} tokens`,
      why: null,
    };
  });
}

/** Is a finished request's answer cached? A prompt answered with 2 pages and more, then the prompt and that answer again. */
export async function measureOutputsCached(ctx: PassportContext, draws: PromptDraws, page: number): Promise<PassportFigure<boolean>> {
  const method =
    "a prompt answered with more than two pages of tokens, then the prompt, the answer and a token of its own: cached beyond the prompt's whole pages or not";
  await flush(ctx);
  const q = draws.draw(4 * page + 1);
  const m = 2 * page + 2;
  const first = await ask(ctx, q, m);
  if (!first.ok) return { value: null, method, uncertainty: null, why: `the prompt failed: ${first.failure}` };
  if (first.outputIds === null)
    return {
      value: null,
      method,
      uncertainty: null,
      why: "the server streams no output ids (or their count disagreed), so the answer cannot be sent back exactly",
    };
  const again = await ask(ctx, joined(joined(q, first.outputIds), draws.draw(1)));
  if (again.cachedTokens < 0) return { value: null, method, uncertainty: null, why: UNREPORTED };
  const promptPages = Math.floor(q.length / page) * page;
  const withAnswer = Math.floor((q.length + first.outputIds.length - 1) / page) * page;
  if (again.cachedTokens >= withAnswer) return { value: true, method, uncertainty: "exact", why: null };
  if (again.cachedTokens <= promptPages) return { value: false, method, uncertainty: "exact", why: null };
  return { value: null, method, uncertainty: null, why: `${again.cachedTokens} cached: between the prompt's ${promptPages} and the answer's ${withAnswer}` };
}

/** LRU or FIFO: A and B cached, the cache filled to its brim, A touched, then a little more: which lost a page? */
export async function measureEviction(
  ctx: PassportContext,
  draws: PromptDraws,
  page: number,
  capacity: number,
): Promise<PassportFigure<"lru" | "fifo" | "other">> {
  const method = "prompts A then B cached, fresh prompts up to the capacity, A sent again, two pages more: A intact and B not is LRU, the reverse FIFO";
  const chunk = chunkTokens(page);
  if (capacity < 3 * chunk)
    return { value: null, method, uncertainty: null, why: `the capacity (${capacity} tokens) holds fewer than three probe prompts of ${chunk}` };
  await flush(ctx);
  const a = draws.draw(chunk);
  const b = draws.draw(chunk);
  await ask(ctx, a);
  await ask(ctx, b);
  await fill(ctx, draws, capacity - 2 * chunk, chunk);
  await ask(ctx, joined(a, draws.draw(1)));
  await fill(ctx, draws, 2 * page, chunk);
  const aAgain = await ask(ctx, joined(a, draws.draw(1)));
  const bAgain = await ask(ctx, joined(b, draws.draw(1)));
  if (aAgain.cachedTokens < 0 || bAgain.cachedTokens < 0) return { value: null, method, uncertainty: null, why: UNREPORTED };
  const aWhole = reported(aAgain).device >= chunk;
  const bWhole = reported(bAgain).device >= chunk;
  const value = aWhole && !bWhole ? "lru" : !aWhole && bWhole ? "fifo" : "other";
  return { value, method, uncertainty: null, why: value === "other" ? `A ${aWhole ? "whole" : "evicted"}, B ${bWhole ? "whole" : "evicted"}` : null };
}

export async function measureIdleExpiry(
  ctx: PassportContext,
  draws: PromptDraws,
  page: number,
  waitS: number,
): Promise<PassportFigure<"none_within_wait" | "expired_within_wait">> {
  const method = `a prompt cached, then sent again after ${waitS} s idle`;
  if (waitS <= 0) return { value: null, method, uncertainty: null, why: "--idle-wait 0" };
  await flush(ctx);
  const p = draws.draw(chunkTokens(page));
  await ask(ctx, p);
  await Bun.sleep(waitS * 1000);
  const again = await ask(ctx, joined(p, draws.draw(1)));
  if (again.cachedTokens < 0) return { value: null, method, uncertainty: null, why: UNREPORTED };
  return { value: again.cachedTokens >= p.length ? "none_within_wait" : "expired_within_wait", method, uncertainty: `within ${waitS} s`, why: null };
}
