/**
 * The radix policy's legal behaviours (--insert-at, --inflight-pages, --no-output-cache), driven through its claims
 * the way the scheduler drives them: match when prefill starts, insert when it ends, release when the request ends.
 */
import { describe, expect, test } from "bun:test";
import { type CacheClaim, type RadixBehaviour, RadixPolicy } from "../../../src/mock/cache-policy.ts";
import { outputTokenId } from "../../../src/mock/output.ts";
import { TieredCache } from "../../../src/mock/tiered-cache.ts";

const VOCAB = 151936;
const seq = (n: number, start: number): number[] => Array.from({ length: n }, (_, i) => start + i);
/** The prompt, then the ids the mock generates for its first `n` output tokens. */
const withAnswer = (prompt: number[], n: number): number[] => [...prompt, ...Array.from({ length: n }, (_, i) => outputTokenId(i, VOCAB))];

function policy(behaviour: RadixBehaviour, cacheTokens = 1_000_000): { cache: TieredCache; radix: RadixPolicy } {
  const cache = new TieredCache(1, cacheTokens, 0);
  return { cache, radix: new RadixPolicy(cache, 16, VOCAB, behaviour) };
}

const claimOf = (radix: RadixPolicy, inputIds: number[]): CacheClaim => radix.claim({ inputIds, idSlot: null, cachePrompt: true }, 0)!;

/** A request admitted and past its prefill (first token out): it is running. */
function running(radix: RadixPolicy, inputIds: number[]): { claim: CacheClaim; cached: number } {
  const claim = claimOf(radix, inputIds);
  const cached = claim.match().tokens;
  claim.insert();
  return { claim, cached };
}

/** The cached tokens a new request with `ids` would be served (it runs to its end: 1 token, nothing new cached). */
function probe(radix: RadixPolicy, ids: number[]): number {
  const claim = claimOf(radix, ids);
  const cached = claim.match().tokens;
  claim.release(0);
  return cached;
}

describe("--insert-at", () => {
  const prompt = seq(32, 100);

  test("prefill (the default): a request sent while the first still decodes finds its prompt", () => {
    const { radix } = policy({});
    const first = running(radix, prompt);
    expect(probe(radix, [...prompt, 7])).toBe(32);
    first.claim.release(5);
    expect(probe(radix, [...withAnswer(prompt, 4), 7])).toBe(36);
  });

  test("finish: a request sent while the first still decodes finds nothing; once it ends, its prompt and answer", () => {
    const { radix, cache } = policy({ insertAt: "finish" });
    const first = running(radix, prompt);
    expect(probe(radix, [...prompt, 7])).toBe(0);
    expect(cache.cachedTokens).toBe(0);
    first.claim.release(5);
    expect(probe(radix, [...withAnswer(prompt, 4), 7])).toBe(36);
  });

  test("finish without cached answers: the prompt alone goes in when the request ends", () => {
    const { radix, cache } = policy({ insertAt: "finish", cacheOutputs: false });
    const first = running(radix, prompt);
    expect(cache.cachedTokens).toBe(0);
    first.claim.release(5);
    expect(cache.cachedTokens).toBe(32);
    expect(probe(radix, [...withAnswer(prompt, 4), 7])).toBe(32);
  });

  test("prefill without cached answers: the prompt at prefill, never the answer", () => {
    const { radix, cache } = policy({ cacheOutputs: false });
    const first = running(radix, prompt);
    expect(cache.cachedTokens).toBe(32);
    first.claim.release(5);
    expect(probe(radix, [...withAnswer(prompt, 4), 7])).toBe(32);
  });

  test("finish: a request cancelled after its first token still caches its prompt; one cancelled in prefill, nothing", () => {
    const { radix, cache } = policy({ insertAt: "finish" });
    const inPrefill = claimOf(radix, seq(32, 5000));
    inPrefill.match();
    inPrefill.release(0); // cancelled before its prefill ended
    expect(cache.cachedTokens).toBe(0);
    const afterFirst = running(radix, prompt);
    afterFirst.claim.release(1); // a fault or a disconnect after the first token
    expect(cache.cachedTokens).toBe(32);
    expect(probe(radix, [...prompt, 7])).toBe(32);
  });
});

describe("--inflight-pages", () => {
  /** A running 64-token request, then a finished 32-token one, then a new 32-token one: 128 tokens in a 96-token cache. */
  function pressure(inflightPages: "evictable" | "locked"): { a: number; d: number; claim: CacheClaim; cache: TieredCache } {
    const { radix, cache } = policy({ inflightPages, cacheOutputs: false }, 96);
    const a = running(radix, seq(64, 1000));
    const d = running(radix, seq(32, 3000));
    d.claim.release(2);
    const b = running(radix, seq(32, 5000)); // over capacity by 32: someone's pages go
    b.claim.release(2);
    return { a: probe(radix, [...seq(64, 1000), 1]), d: probe(radix, [...seq(32, 3000), 1]), claim: a.claim, cache };
  }

  test("evictable (the default): eviction under pressure takes the running request's older pages", () => {
    const { a, d } = pressure("evictable");
    expect(a).toBe(32);
    expect(d).toBe(32);
  });

  test("locked: eviction spares the running request's pages and evicts another request's", () => {
    const { a, d, claim, cache } = pressure("locked");
    expect(a).toBe(64);
    expect(d).toBe(0);
    expect(cache.device.lockedTokens()).toBe(64);
    claim.release(2);
    expect(cache.device.lockedTokens()).toBe(0);
  });

  test("locked, everything held: over capacity while they run, back within it once they end", () => {
    const { radix, cache } = policy({ inflightPages: "locked", cacheOutputs: false }, 64);
    const a = running(radix, seq(64, 1000));
    const b = running(radix, seq(64, 2000));
    expect(cache.cachedTokens).toBe(128);
    expect(cache.evictedTokens).toBe(0);
    b.claim.release(2);
    expect(cache.cachedTokens).toBe(64);
    expect(probe(radix, [...seq(64, 1000), 1])).toBe(64);
    a.claim.release(2);
    expect(cache.device.lockedTokens()).toBe(0);
  });

  test("locked: a request's matched pages are held from its prefill's start, before it inserts anything", () => {
    const { radix, cache } = policy({ inflightPages: "locked", insertAt: "finish", cacheOutputs: false }, 64);
    const warm = running(radix, seq(48, 1000));
    warm.claim.release(1);
    const reader = claimOf(radix, [...seq(48, 1000), ...seq(16, 9000)]);
    expect(reader.match().tokens).toBe(48);
    reader.insert();
    const other = running(radix, seq(48, 2000));
    other.claim.release(1); // 96 > 64: the other prompt's pages give way
    expect(cache.cachedTokens).toBe(64);
    expect(probe(radix, [...seq(48, 1000), 1])).toBe(48);
    reader.release(2);
    expect(cache.device.lockedTokens()).toBe(0);
  });
});
