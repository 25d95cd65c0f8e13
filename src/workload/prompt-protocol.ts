/** The messages between the prompt feed (main thread) and its worker (prompt-worker.ts). */

/** Main -> worker. */
export type ToWorker =
  /** Once: the id population and the run's --seed (as a decimal string: a bigint does not cross threads everywhere). */
  | { type: "init"; population: Uint32Array; seed: string }
  /**
   * A new pct: draw its prefix, remember the state after it (where every pass starts), move the run's generator past
   * `count` suffixes (writing them to `dumpPath` when set), and answer "prefix".
   */
  | { type: "pct"; pct: number; totalTokens: number; count: number; headLen: number; dumpPath: string | null }
  /** A pass over the pct's first `count` prompts (one line: one rate). */
  | { type: "pass"; pass: number; count: number }
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
  | { type: "prefix"; pct: number; prefixLen: number; suffixLen: number; prefix: Uint32Array; prefixDigits: Uint8Array }
  /** Prompts `first`, `first + 1`, ... of a pass. */
  | { type: "prompts"; pass: number; first: number; prompts: WirePrompt[] }
  | { type: "error"; message: string };
