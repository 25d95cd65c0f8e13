/**
 * Random prompts with an exact shared prefix, drawn as bench_warm_cache.py's build_prompts does:
 * prefix_len = total*pct//100, the prefix drawn first (if any), then each prompt's suffix in order,
 * all from one PyRandom shared across pcts. Ids live in typed arrays and are serialized once, so the
 * hot path only concatenates bytes.
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
  /** The shared prefix ids (prefixLen of them). */
  prefix: Uint32Array;
  /** numPrompts*suffixLen ids; prompt i's suffix starts at i*suffixLen. */
  suffixes: Uint32Array;
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
}

function requireCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`buildPrompts: ${name} must be a non-negative integer, got ${value}`);
}

/** Draws one pct's prompts in the script's order. */
export function buildPrompts(p: BuildPromptsParams): PromptSet {
  const { population, totalTokens, pct, numPrompts, rng } = p;
  requireCount("totalTokens", totalTokens);
  requireCount("numPrompts", numPrompts);
  if (!Number.isInteger(pct) || pct < 0 || pct > 100) throw new Error(`buildPrompts: pct must be an integer in [0, 100], got ${pct}`);
  // Python's total*pct//100 on ints; the remainder form keeps it exact however large the product.
  const scaled = totalTokens * pct;
  const prefixLen = (scaled - (scaled % 100)) / 100;
  const suffixLen = totalTokens - prefixLen;

  const prefix = new Uint32Array(prefixLen);
  rng.choicesInto(population, prefix, 0, prefixLen);
  const suffixes = new Uint32Array(numPrompts * suffixLen);
  for (let i = 0; i < numPrompts; i++) rng.choicesInto(population, suffixes, i * suffixLen, suffixLen);
  return { pct, prefixLen, suffixLen, numPrompts, prefix, suffixes };
}

/** Prompt i's suffix, a view into set.suffixes (no copy). */
export const suffixIds = (set: PromptSet, i: number): Uint32Array =>
  set.suffixes.subarray(i * set.suffixLen, (i + 1) * set.suffixLen);

/** Prompt i's full ids (prefix + suffix) as a new array; for tests and the prompt dump. */
export function promptIds(set: PromptSet, i: number): Uint32Array {
  if (!Number.isInteger(i) || i < 0 || i >= set.numPrompts) throw new RangeError(`prompt index ${i} out of range [0, ${set.numPrompts})`);
  const ids = new Uint32Array(set.prefixLen + set.suffixLen);
  ids.set(set.prefix, 0);
  ids.set(suffixIds(set, i), set.prefixLen);
  return ids;
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

/** One JSON line per prompt ({"shared_prefix_pct",...,"input_ids"}), for --dump-prompts. */
export function formatPromptDump(set: PromptSet): string {
  const prefixText = textDecoder.decode(serializeIds(set.prefix));
  const lines: string[] = [];
  for (let i = 0; i < set.numPrompts; i++) {
    const suffixText = textDecoder.decode(serializeIds(suffixIds(set, i)));
    const ids = prefixText && suffixText ? `${prefixText},${suffixText}` : prefixText || suffixText;
    lines.push(
      `{"shared_prefix_pct":${set.pct},"index":${i},"prefix_len":${set.prefixLen},"suffix_len":${set.suffixLen},"input_ids":[${ids}]}\n`,
    );
  }
  return lines.join("");
}
