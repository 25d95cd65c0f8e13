/** The messages between the prompt feed (main thread) and its worker (prompt-worker.ts). */

/** Main -> worker. */
export type ToWorker =
  /** Once: the id population and the run's --seed (as a decimal string: a bigint does not cross threads everywhere). */
  | { type: "init"; population: Uint32Array; seed: string }
  /**
   * A new pct: draw its `workingSet` prefixes, remember the state after them (where every pass starts), move the
   * run's generator past `count` suffixes (with `dump`, posting them as "dump" lines first), and answer "prefix".
   */
  | { type: "pct"; pct: number; totalTokens: number; workingSet: number; count: number; groups: Int32Array | null; headLen: number; dump: boolean }
  /**
   * A pass over `positions` of the pct's prompts, `first`, `first + step`, ... (one line: one rate; a shard's share
   * when step > 1). Its prompts are numbered by position in that list.
   */
  | { type: "pass"; pass: number; positions: number; first: number; step: number }
  /** The pass may draw `prompts` more. */
  | { type: "credit"; pass: number; prompts: number }
  | { type: "close"; pass: number };

/** One prompt's own part of the body. */
export interface WirePrompt {
  /** The suffix's digits in chunks (transferred, not copied). */
  chunks: Uint8Array[];
  /** The suffix's first ids, for the next flush probe. */
  head: Uint32Array;
  bytes: number;
}

/** Worker -> main. */
export type FromWorker =
  /** --dump-prompts: a batch of the pct's dump lines (transferred), in order, all before its "prefix". */
  | { type: "dump"; bytes: Uint8Array }
  | { type: "prefix"; pct: number; prefixLen: number; suffixLen: number; prefixes: Uint32Array[]; prefixDigits: Uint8Array[]; idsHash: string }
  /** The prompts at positions `first`, `first + 1`, ... of a pass. */
  | { type: "prompts"; pass: number; first: number; prompts: WirePrompt[] }
  | { type: "error"; message: string };
