/**
 * Prompts drawn one at a time, in the script's order (the prefix, then suffix 0, 1, 2, ...), straight into the
 * digits that go on the wire: nothing holds a pct's prompts at once. Draw for draw the same as buildPrompts
 * (prompts.ts), which keeps the whole set and stays the reference the tests compare against.
 */
import { serializeIds } from "./prompts.ts";
import type { PyRandom } from "./rng.ts";

/** Ids per serialized chunk: ~50 KB of digits, so a body in flight is released piece by piece as it is sent. */
const CHUNK_TOKENS = 8192;

/** One suffix, ready to send. */
export interface DrawnSuffix {
  /** Its ids as ASCII digits joined by ",", in chunks that are themselves joined by "," on the wire. */
  chunks: Uint8Array[];
  /** Its first ids (as many as asked), for the flush probe of the next pct. */
  head: Uint32Array;
  /** Total bytes of the chunks. */
  bytes: number;
}

/** Draws suffixes in order from `rng`, which it advances exactly as choices(k=suffixLen) per prompt would. */
export class SuffixDrawer {
  private readonly scratch: Uint32Array;

  constructor(
    private readonly population: Uint32Array,
    private readonly rng: PyRandom,
    private readonly suffixLen: number,
    private readonly chunkTokens = CHUNK_TOKENS,
  ) {
    this.scratch = new Uint32Array(Math.max(1, Math.min(suffixLen, chunkTokens)));
  }

  /** The next suffix, keeping its first `headLen` ids. */
  next(headLen: number): DrawnSuffix {
    const head = new Uint32Array(Math.min(headLen, this.suffixLen));
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for (let at = 0; at < this.suffixLen; at += this.chunkTokens) {
      const n = Math.min(this.chunkTokens, this.suffixLen - at);
      const ids = this.scratch.subarray(0, n);
      this.rng.choicesInto(this.population, ids, 0, n);
      if (at < head.length) head.set(ids.subarray(0, Math.min(n, head.length - at)), at);
      const digits = serializeIds(ids);
      chunks.push(digits);
      bytes += digits.length;
    }
    return { chunks, head, bytes };
  }

  /** Moves past `n` suffixes without drawing them (the state is as if they had been drawn). */
  skip(n: number): void {
    this.rng.skipRandoms(n * this.suffixLen);
  }
}

const encoder = new TextEncoder();
const COMMA = encoder.encode(",");

/** Chunks of one id list joined by "," (a copy), e.g. for the prompt dump. */
export function joinDigits(parts: readonly Uint8Array[]): Uint8Array {
  const nonEmpty = parts.filter((p) => p.length > 0);
  let size = Math.max(0, nonEmpty.length - 1);
  for (const p of nonEmpty) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  nonEmpty.forEach((p, i) => {
    if (i > 0) out.set(COMMA, at++);
    out.set(p, at);
    at += p.length;
  });
  return out;
}

/**
 * One --dump-prompts line, byte for byte as formatPromptDump (prompts.ts) writes it: prompt `index` shares prefix
 * `group` of the working set (index % workingSet but in a routed sweep), whose digits are `prefixDigits`.
 */
export function promptDumpLine(
  pct: number,
  index: number,
  prefixLen: number,
  suffixLen: number,
  workingSet: number,
  group: number,
  prefixDigits: Uint8Array,
  suffix: DrawnSuffix,
): Uint8Array {
  const which = workingSet > 1 ? `,"working_set":${workingSet},"prefix_index":${group}` : "";
  const head = encoder.encode(`{"shared_prefix_pct":${pct},"index":${index},"prefix_len":${prefixLen},"suffix_len":${suffixLen}${which},"input_ids":[`);
  return Buffer.concat([head, joinDigits([prefixDigits, ...suffix.chunks]), encoder.encode("]}\n")]);
}
