/**
 * The workload fingerprint of a pct line: everything that decides what the server was sent, so that `compare`
 * only pairs lines that measured the same work. Written in every pct line as `workload`.
 */

export interface WorkloadFingerprint {
  backend: string;
  /** SHA-256 of the tokenizer.json bytes (as `sha256sum` prints it). */
  tokenizer_sha256: string;
  /** Largest token id + 1. */
  vocab_size: number;
  total_tokens: number;
  output_len: number;
  /** Whether requests asked the server to ignore EOS (off with --disable-ignore-eos): it decides the output length. */
  ignore_eos: boolean;
  num_prompts: number;
  max_concurrency: number;
  /** The seed as a decimal string (Python ints have any size). */
  seed: string;
  shared_prefix_pct: number;
  /** wyhash (64-bit, hex) of the prefix ids then every suffix's ids, as u32 little-endian. */
  prompt_ids_hash: string;
}

/**
 * The fields in the order a difference is named: causes before consequences (another tokenizer also changes the
 * vocabulary and the prompt ids, so the tokenizer is named first).
 */
export const FINGERPRINT_FIELDS = [
  "backend", "tokenizer_sha256", "vocab_size", "total_tokens", "output_len", "ignore_eos", "num_prompts",
  "max_concurrency", "seed", "shared_prefix_pct", "prompt_ids_hash",
] as const satisfies ReadonlyArray<keyof WorkloadFingerprint>;

type Unlisted = Exclude<keyof WorkloadFingerprint, (typeof FINGERPRINT_FIELDS)[number]>;
const everyFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFieldListed;
