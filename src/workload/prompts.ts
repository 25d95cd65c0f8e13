/**
 * Random prompts with an exact shared prefix, drawn as bench_warm_cache.py's build_prompts does:
 * prefix_len = total*pct//100, the prefix drawn first (if any), then each prompt's suffix in order,
 * all from one PyRandom shared across pcts. Ids live in typed arrays and are serialized once, so the
 * hot path only concatenates bytes.
 *
 * With a working set of K (cache-pressure studies) K distinct prefixes are drawn first, in order, and prompt i
 * shares prefix i mod K; K = 1 draws exactly what the script draws.
 */
import type { PyRandom } from "./rng.ts";

/** The prompts of one shared-prefix percentage. */
export interface PromptSet {
  /** Shared-prefix percentage, 0-100. */
  pct: number;
  /** Shared prefix length, tokens. */
  prefixLen: number;
  /** Per-prompt unique suffix length, tokens. */
  suffixLen: number;
  numPrompts: number;
  /** The shared prefix ids (prefixLen of them); the first of `prefixes`. */
  prefix: Uint32Array;
  /** The working set's prefixes, in draw order; prompt i shares prefixes[i % length]. */
  prefixes: Uint32Array[];
  /** numPrompts*suffixLen ids; prompt i's suffix starts at i*suffixLen. */
  suffixes: Uint32Array;
  /** promptIdsHash of the set (the workload fingerprint's prompt_ids_hash). */
  idsHash: string;
}

export interface BuildPromptsParams {
  /** Token ids to draw from (sorted ascending for reproducibility). */
  population: Uint32Array;
  /** Prompt length, tokens. */
  totalTokens: number;
  pct: number;
  numPrompts: number;
  /** Shared across pcts, in sweep order, as the script's single random.Random(seed). */
  rng: PyRandom;
  /** Distinct prefixes in rotation (default 1). */
  workingSet?: number;
}

function requireCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`buildPrompts: ${name} must be a non-negative integer, got ${value}`);
}

/** The script's split of a prompt: prefix_len = total*pct//100, the rest is the suffix. */
export function splitPrompt(totalTokens: number, pct: number): { prefixLen: number; suffixLen: number } {
  // Python's total*pct//100 on ints; the remainder form keeps it exact however large the product.
  const scaled = totalTokens * pct;
  const prefixLen = (scaled - (scaled % 100)) / 100;
  return { prefixLen, suffixLen: totalTokens - prefixLen };
}

/** Draws one pct's prompts in the script's order. */
export function buildPrompts(p: BuildPromptsParams): PromptSet {
  const { population, totalTokens, pct, numPrompts, rng } = p;
  const workingSet = p.workingSet ?? 1;
  requireCount("totalTokens", totalTokens);
  requireCount("numPrompts", numPrompts);
  if (!Number.isSafeInteger(workingSet) || workingSet < 1) throw new Error(`buildPrompts: workingSet must be a positive integer, got ${workingSet}`);
  if (!Number.isInteger(pct) || pct < 0 || pct > 100) throw new Error(`buildPrompts: pct must be an integer in [0, 100], got ${pct}`);
  const { prefixLen, suffixLen } = splitPrompt(totalTokens, pct);

  const prefixes: Uint32Array[] = [];
  for (let k = 0; k < workingSet; k++) {
    const prefix = new Uint32Array(prefixLen);
    rng.choicesInto(population, prefix, 0, prefixLen);
    prefixes.push(prefix);
  }
  const idsHash = promptIdsHash({ population, prefixes, afterPrefixes: rng, suffixLen, count: numPrompts });
  const suffixes = new Uint32Array(numPrompts * suffixLen);
  for (let i = 0; i < numPrompts; i++) rng.choicesInto(population, suffixes, i * suffixLen, suffixLen);
  return { pct, prefixLen, suffixLen, numPrompts, prefix: prefixes[0] as Uint32Array, prefixes, suffixes, idsHash };
}

/** Which of the working set's prefixes prompt i shares. */
export const prefixIndexOf = (set: PromptSet, i: number): number => i % set.prefixes.length;

/** Prompt i's shared prefix. */
const prefixOf = (set: PromptSet, i: number): Uint32Array => set.prefixes[prefixIndexOf(set, i)] as Uint32Array;

/** Prompt i's suffix, a view into set.suffixes (no copy). */
export const suffixIds = (set: PromptSet, i: number): Uint32Array => set.suffixes.subarray(i * set.suffixLen, (i + 1) * set.suffixLen);

/** Prompt i's full ids (prefix + suffix) as a new array; for tests and the prompt dump. */
export function promptIds(set: PromptSet, i: number): Uint32Array {
  if (!Number.isInteger(i) || i < 0 || i >= set.numPrompts) throw new RangeError(`prompt index ${i} out of range [0, ${set.numPrompts})`);
  const ids = new Uint32Array(set.prefixLen + set.suffixLen);
  ids.set(prefixOf(set, i), 0);
  ids.set(suffixIds(set, i), set.prefixLen);
  return ids;
}

/**
 * wyhash (64-bit, 16 hex digits) of what decides a pct's prompt ids: the id population, the working set's prefix ids,
 * the generator's state right after them (every suffix is its next draws), the suffix length and the prompt count.
 * Equal for two runs exactly when they send the same prompts (barring collisions), and computed without drawing a
 * single suffix, so a prompt worker that draws them just in time can give it before the pct starts.
 */
export function promptIdsHash(p: {
  population: Uint32Array;
  prefixes: readonly Uint32Array[];
  afterPrefixes: PyRandom;
  suffixLen: number;
  count: number;
}): string {
  const bytes = (ids: Uint32Array) => new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength);
  let h = BigInt(Bun.hash.wyhash(bytes(p.population), BigInt(p.prefixes.length)));
  for (const prefix of p.prefixes) h = BigInt(Bun.hash.wyhash(bytes(prefix), h ^ BigInt(prefix.length)));
  h = BigInt(Bun.hash.wyhash(p.afterPrefixes.stateBytes(), h));
  h = BigInt(Bun.hash.wyhash(bytes(Uint32Array.of(p.suffixLen, p.count)), h));
  return h.toString(16).padStart(16, "0");
}

const COMMA = 0x2c;
const ZERO = 0x30;

const decimalDigits = (v: number): number =>
  v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 : v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;

/** ASCII decimal ids joined by "," with no brackets: the inside of a JSON array, built once per prompt part. */
export function serializeIds(ids: Uint32Array): Uint8Array {
  const n = ids.length;
  if (n === 0) return new Uint8Array(0);
  let size = n - 1;
  for (let i = 0; i < n; i++) size += decimalDigits(ids[i]!);
  const out = new Uint8Array(size);
  // Fill from the end: each number's digits come out least-significant first.
  let pos = size;
  for (let i = n - 1; i >= 0; i--) {
    let v = ids[i]!;
    do {
      const q = Math.floor(v / 10);
      out[--pos] = ZERO + (v - q * 10);
      v = q;
    } while (v > 0);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: at i = 0, pos is 0: out[-1] = … is a no-op.
    if (i > 0) out[--pos] = COMMA;
  }
  return out;
}

const textDecoder = new TextDecoder();

/**
 * One JSON line per prompt ({"shared_prefix_pct",...,"input_ids"}), for --dump-prompts; with a working set of more
 * than one prefix, each line also names the prefix it shares ("prefix_index").
 */
export function formatPromptDump(set: PromptSet): string {
  const prefixTexts = set.prefixes.map((prefix) => textDecoder.decode(serializeIds(prefix)));
  const rotating = set.prefixes.length > 1;
  const lines: string[] = [];
  for (let i = 0; i < set.numPrompts; i++) {
    const prefixText = prefixTexts[prefixIndexOf(set, i)] as string;
    const suffixText = textDecoder.decode(serializeIds(suffixIds(set, i)));
    const ids = prefixText && suffixText ? `${prefixText},${suffixText}` : prefixText || suffixText;
    const which = rotating ? `,"working_set":${set.prefixes.length},"prefix_index":${prefixIndexOf(set, i)}` : "";
    lines.push(`{"shared_prefix_pct":${set.pct},"index":${i},"prefix_len":${set.prefixLen},"suffix_len":${set.suffixLen}${which},"input_ids":[${ids}]}\n`);
  }
  return lines.join("");
}
