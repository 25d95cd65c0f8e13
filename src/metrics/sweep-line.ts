/**
 * The typed record of a sweep line, SweepLine (a pct at one working-set size and one request rate): what the console prints,
 * what the JSONL line holds (key for key, in this order), and what `report`, gates and comparisons read. The line
 * type, its key order and every key's meaning live in src/schema (the Point model); this module keeps the names the
 * sweep has always used (schema/build-line.ts builds every line).
 */
import type { SCRIPT_KEYS, SweepRecord } from "../schema/lines.ts";

type ScriptKey = (typeof SCRIPT_KEYS)[number];

/** One sweep line: the script's keys, then ours. */
export type SweepLine = SweepRecord;

/** What produced a line (this build, the server, the tokenizer, the seed): the same keys in a multi-turn round line. */
export type Provenance = Pick<
  SweepLine,
  "warmbench_version" | "started_at" | "model" | "tokenizer" | "population_size" | "seed" | "base_url" | "server_version" | "text_mode"
>;

/** Our keys, after the script's: everything of SweepLine that the script does not write. */
type OwnFields = Omit<SweepLine, ScriptKey>;

/**
 * A pct line as read back from a file: ours, one written by 0.1, or one written by the script itself (which has
 * only the script's keys). Each of our sections is shown only when its keys are there.
 */
export type StoredSweepLine = Pick<SweepLine, ScriptKey> &
  Partial<Omit<OwnFields, "hdr">> & { hdr?: Partial<SweepLine["hdr"]> & Pick<SweepLine["hdr"], "ttft_us" | "tpot_us" | "itl_us" | "e2e_latency_us"> };
