/**
 * llama.cpp's slots: how many (its /props), whether each has a cache of its own (a prompt cached in slot 0 comes
 * back uncached in slot 1), the context of one (the longest prompt slot 0 accepts, by bisection), and whether the
 * host-RAM prompt cache restores an erased slot (found by behaviour at preflight: ServerProfile.flushGap).
 */
import type { PassportFigure } from "../schema/passport.ts";
import { ask, flush, type PassportContext, type PromptDraws } from "./context.ts";

type Slots = { count: number; context_tokens: number | null; separate_caches: boolean; ram_cache_restores: boolean | null };

export async function measureSlots(ctx: PassportContext, draws: PromptDraws, statedContext: number | null): Promise<PassportFigure<Slots>> {
  const method =
    "a prompt cached in slot 0 sent to slot 1 (separate caches: 0 cached there); the longest prompt slot 0 accepts, by bisection; an erased slot's prompt sent again (the RAM cache restores it or not)";
  const count = ctx.server.cacheSlots ?? null;
  if (count === null) return { value: null, method, uncertainty: null, why: "the server has one shared cache, not per-slot caches" };
  await flush(ctx);
  const a = draws.draw(64);
  await ask(ctx, a, 1, 0);
  const other = count > 1 ? await ask(ctx, a, 1, 1) : null;
  if (other !== null && other.cachedTokens < 0)
    return { value: null, method, uncertainty: null, why: "the server reports no cached tokens, so whether its slots share a cache cannot be seen" };
  const separate = other === null ? true : other.cachedTokens === 0;
  // The longest prompt (with one output token) slot 0 takes: the slot's context less one.
  let good = 64;
  let bad = Math.max(2 * (statedContext ?? 4096), 128);
  if ((await ask(ctx, draws.draw(bad - 1), 1, 0, false)).ok) good = bad - 1;
  else {
    while (bad - good > 1) {
      const mid = Math.floor((good + bad) / 2);
      if ((await ask(ctx, draws.draw(mid), 1, 0, false)).ok) good = mid;
      else bad = mid;
    }
  }
  await flush(ctx);
  return {
    value: { count, context_tokens: good + 1, separate_caches: separate, ram_cache_restores: (ctx.server.flushGap ?? null) !== null },
    method,
    uncertainty: "count as /props states it; context exact (the longest prompt accepted plus its output token)",
    why: null,
  };
}
