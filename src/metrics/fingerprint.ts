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

/** JSON with sorted keys, so equal objects written in another key order hash alike. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** The keys that say what a line measured (its timings to full precision, its histograms), not who measured it. */
const MEASURED = /^(mean|median|std|p\d+)_(ttft|tpot|itl|e2e_latency)_ms$|^(benchmark_duration|completed|failed|total_output|hdr)$/;

/**
 * The content fingerprint of a measured line: a hash of its timings and histograms, blind to its run id, its
 * header and its time of day. Two runs of a real server never agree on every mean to the last bit, so two lines
 * that hash alike are one measurement written twice (a file copied under a new run id).
 */
export function measuredFingerprint(line: object): string {
  const picked = Object.entries(line as Record<string, unknown>).filter(([k]) => MEASURED.test(k));
  return new Bun.CryptoHasher("sha256")
    .update(canonical(Object.fromEntries(picked)))
    .digest("hex")
    .slice(0, 16);
}
