/** The messages between the prompt feed (main thread) and its worker (prompt-worker.ts). */

/** Main -> worker. */
export type ToWorker =
  /** Once: the id population and the run's --seed (as a decimal string: a bigint does not cross threads everywhere). */
  | { type: "init"; population: Uint32Array; seed: string }
  /**
   * A new pct: draw its `workingSet` prefixes, remember the state after them (where every pass starts), move the
   * run's generator past `count` suffixes (writing them to `dumpPath` when set), and answer "prefix".
   */
  | { type: "pct"; pct: number; totalTokens: number; workingSet: number; count: number; headLen: number; dumpPath: string | null }
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
  | { type: "prefix"; pct: number; prefixLen: number; suffixLen: number; prefixes: Uint32Array[]; prefixDigits: Uint8Array[]; idsHash: string }
  /** The prompts at positions `first`, `first + 1`, ... of a pass. */
  | { type: "prompts"; pass: number; first: number; prompts: WirePrompt[] }
  | { type: "error"; message: string };
