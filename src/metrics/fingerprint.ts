/**
 * The workload fingerprint of a pct line: everything that decides what the server was sent, so that `compare`
 * only pairs lines that measured the same work. Written in every pct line as `workload`.
 */
import type { WorkloadFingerprint } from "../schema/nested.ts";

// Its shape (each field with what it means) is the schema's: declared once in src/schema/nested.ts.

/**
 * The fields in the order a difference is named: causes before consequences (another tokenizer also changes the
 * vocabulary and the prompt ids, so the tokenizer is named first).
 */
export const FINGERPRINT_FIELDS = [
  "backend",
  "tokenizer_sha256",
  "vocab_size",
  "total_tokens",
  "output_len",
  "ignore_eos",
  "num_prompts",
  "max_concurrency",
  "seed",
  "shared_prefix_pct",
  "prompt_ids_hash",
] as const satisfies ReadonlyArray<keyof WorkloadFingerprint>;

type Unlisted = Exclude<keyof WorkloadFingerprint, (typeof FINGERPRINT_FIELDS)[number]>;
const everyFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFieldListed;
