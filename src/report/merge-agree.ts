/**
 * What lines must share to be merged into one: the same point (a sweep's pct, working set and rate; a multi-turn
 * run's round) of the same workload, drawn by the same model's tokenizer. Merging anything else would average
 * different experiments into one number.
 */
import { UsageError } from "../errors.ts";
import { FINGERPRINT_FIELDS } from "../metrics/fingerprint.ts";
import type { WorkloadFingerprint } from "../schema/nested.ts";
import type { MergeLine } from "./merge-rules.ts";

/**
 * Keys that must agree for lines to be merged: the same point of the same work shape, drawn by the same model's
 * tokenizer. A sweep line's point is its cell (pct, working set, rate); a round line's its round of conversations of
 * one shape (the clients add up).
 */
const SAME = [
  "shared_prefix_pct",
  "prefix_len",
  "suffix_len",
  "total_tokens",
  "round",
  "num_rounds",
  "shared_system_tokens",
  "first_turn_tokens",
  "turn_tokens",
  "round_barrier",
  "ready_queue_policy",
  "output_len",
  "backend",
  "request_rate",
  "working_set",
  "model",
  "tokenizer",
  // How the requests were routed over replicas (absent: one server): each run's replicas are its own, the policy is not.
  "route",
] as const;

/** Fingerprint fields that add up or are listed in the merged one (mergedWorkload); every other field must agree. */
const MERGED_FINGERPRINT: ReadonlySet<string> = new Set(["num_prompts", "max_concurrency", "seed", "prompt_ids_hash"]);
const SAME_FINGERPRINT = FINGERPRINT_FIELDS.filter((f) => !MERGED_FINGERPRINT.has(f));

/** A line's value for a SAME key; a file written before --working-set measured one prefix. */
const sameValue = (l: MergeLine, key: (typeof SAME)[number]): unknown => (key === "working_set" ? (l.working_set ?? 1) : l[key]);

/** Throws naming the first key whose values differ across the group, and the two files. */
function checkAgree(values: unknown[], what: string, line: number, names: readonly string[]): void {
  const show = (v: unknown) => (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
  const k = values.findIndex((v) => v !== values[0]);
  if (k > 0) throw new UsageError(`merge: line ${line}: ${what} differs (${names[0]}: ${show(values[0])}, ${names[k]}: ${show(values[k])})`);
}

/** Refuses (UsageError naming the field and the files) a group of lines, one per file, that did not measure the same work. */
export function checkSameWork(group: readonly MergeLine[], line: number, names: readonly string[]): void {
  for (const key of SAME)
    checkAgree(
      group.map((l) => sameValue(l, key)),
      key,
      line,
      names,
    );
  const workloads = group.map((l) => l.workload as WorkloadFingerprint | undefined);
  // Lines without a fingerprint are refused by mergedWorkload, with their own message.
  if (!workloads.every((w) => w !== undefined && w !== null)) return;
  for (const f of SAME_FINGERPRINT)
    checkAgree(
      workloads.map((w) => w![f]),
      `the workload fingerprint's ${f}`,
      line,
      names,
    );
}
