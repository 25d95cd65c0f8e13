/**
 * When a prompt's pages enter the cache: at its prefill's end (SGLang, vLLM) or only once the request ends. A prompt
 * is answered at length; the same prompt and a token of its own is sent once the first answer's first token should
 * be in. Cached while the first still runs: inserted at prefill; not: at the finish. The client's clock says whether
 * the order held (the second sent after the first's first token, its own first token well before the first's end).
 */
import type { PassportFigure } from "../schema/passport.ts";
import { UNREPORTED } from "./capacity.ts";
import { ask, flush, joined, type PassportContext, type PromptDraws } from "./context.ts";

/** The first answer's length: long enough to outlast the second prompt's prefill on a server decoding at any speed. */
const ANSWER_TOKENS = 64;
/** Tokens the first answer must still have had to go when the second's first token came. */
const TOKENS_LEFT = 4;

export async function measureInsertAt(ctx: PassportContext, draws: PromptDraws, page: number): Promise<PassportFigure<"prefill" | "finish">> {
  const method = `a prompt answered with ${ANSWER_TOKENS} tokens; the prompt and a token of its own sent after the first answer's first token, answered while it still runs: cached (inserted at prefill) or not (at its finish)`;
  await flush(ctx);
  const q = draws.draw(4 * page + 1);
  // A cold prompt of the same length says when the first answer's first token should be in.
  const cold = await ask(ctx, draws.draw(q.length));
  if (!cold.ok) return { value: null, method, uncertainty: null, why: `the cold prompt failed: ${cold.failure}` };
  await flush(ctx);
  const first = ask(ctx, q, ANSWER_TOKENS);
  await Bun.sleep(Math.ceil(2 * cold.ttftMs) + 5);
  const second = await ask(ctx, joined(q, draws.draw(1)));
  const a = await first;
  if (!a.ok || !second.ok) return { value: null, method, uncertainty: null, why: `a prompt failed: ${a.ok ? second.failure : a.failure}` };
  if (second.cachedTokens < 0) return { value: null, method, uncertainty: null, why: UNREPORTED };
  if (second.startMs <= a.firstTokenMs)
    return {
      value: null,
      method,
      uncertainty: null,
      why: `the second prompt was sent ${(a.firstTokenMs - second.startMs).toFixed(1)} ms before the first answer's first token`,
    };
  const perTokenMs = (a.endMs - a.firstTokenMs) / (ANSWER_TOKENS - 1);
  const aheadMs = a.endMs - second.firstTokenMs;
  if (aheadMs < TOKENS_LEFT * perTokenMs)
    return {
      value: null,
      method,
      uncertainty: null,
      why: `the first answer ended ${aheadMs.toFixed(1)} ms after the second's first token, under ${TOKENS_LEFT} of its tokens (${perTokenMs.toFixed(2)} ms each): the order cannot be told`,
    };
  const promptPages = Math.floor(q.length / page) * page;
  if (second.cachedTokens >= promptPages) return { value: "prefill", method, uncertainty: "exact", why: null };
  if (second.cachedTokens === 0) return { value: "finish", method, uncertainty: "exact", why: null };
  return { value: null, method, uncertainty: null, why: `${second.cachedTokens} cached: neither none nor the prompt's ${promptPages}` };
}
