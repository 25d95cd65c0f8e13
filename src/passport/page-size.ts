/**
 * Page size: one prompt A of 2049 tokens cached, then prompts sharing exactly k of its first tokens (k from 1023 down
 * to 3, chosen so that no two page sizes up to 1024 floor them all alike) and then tokens of their own. A cache of
 * page p reports floor(k / p) * p cached for each: the page size is the one p (1..1024) consistent with every answer.
 */
import type { PassportFigure } from "../schema/passport.ts";
import { ask, joined, type PassportContext, type PromptDraws } from "./context.ts";

const SHARED = [1023, 1001, 777, 513, 389, 257, 193, 131, 97, 65, 47, 33, 23, 17, 11, 9, 7, 5, 3] as const;
const MAX_PAGE = 1024;

const method = (length: number, shared: readonly number[]) =>
  `one prompt of ${length} tokens cached, then ${shared.length} prompts sharing k of its first tokens (k = ${shared.join(", ")}): cached tokens come in whole pages, floor(k / page) * page`;

/** `contextTokens`: the most a prompt may hold (a llama.cpp slot's context); the prompts stay within it. */
export async function measurePageSize(ctx: PassportContext, draws: PromptDraws, contextTokens: number | null): Promise<PassportFigure<number>> {
  const a = draws.draw(Math.min(2 * MAX_PAGE + 1, (contextTokens ?? Infinity) - 16));
  const shared = SHARED.filter((x) => x + 8 < a.length);
  const METHOD = method(a.length, shared);
  const first = await ask(ctx, a);
  if (!first.ok) return { value: null, method: METHOD, uncertainty: null, why: `the first prompt failed: ${first.failure}` };
  const seen: Array<[number, number]> = [];
  for (const k of shared) {
    const r = await ask(ctx, joined(a.subarray(0, k), draws.draw(8)));
    if (!r.ok) return { value: null, method: METHOD, uncertainty: null, why: `a prompt sharing ${k} tokens failed: ${r.failure}` };
    if (r.cachedTokens < 0) return { value: null, method: METHOD, uncertainty: null, why: "the server reports no cached tokens" };
    seen.push([k, r.cachedTokens]);
  }
  if (seen.every(([, c]) => c === 0)) {
    return {
      value: null,
      method: METHOD,
      uncertainty: null,
      why: `no shared prefix came back cached (up to ${SHARED[0]} tokens): no prefix cache, or pages longer than that`,
    };
  }
  return pageSizeFromAnswers(seen, METHOD);
}

/**
 * The page size the answers (shared k -> cached tokens) fix, or none: where more than one page size fits them all
 * (a short slot context leaves few k to ask), the figure says ambiguous and names the candidates, and picks none,
 * since a guess would be used as if measured (--passport, the cache model).
 */
export function pageSizeFromAnswers(seen: ReadonlyArray<readonly [number, number]>, method: string): PassportFigure<number> {
  const consistent: number[] = [];
  for (let p = 1; p <= MAX_PAGE; p++) if (seen.every(([k, c]) => Math.floor(k / p) * p === c)) consistent.push(p);
  if (consistent.length === 1) return { value: consistent[0]!, method, uncertainty: "exact: the only page size every answer agrees with", why: null };
  const shown = seen.map(([k, c]) => `${k}->${c}`).join(", ");
  if (consistent.length === 0) {
    return {
      value: null,
      method,
      uncertainty: null,
      why: `no page size up to ${MAX_PAGE} explains the cached tokens (shared->cached: ${shown}): not a paged prefix cache of one slot`,
    };
  }
  return {
    value: null,
    method,
    uncertainty: `ambiguous: one of ${consistent.join(", ")}`,
    why: `ambiguous: page sizes ${consistent.join(", ")} all explain the answers (shared->cached: ${shown}); none is picked`,
  };
}
