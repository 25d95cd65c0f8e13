/**
 * A multi-turn turn as the engine reads it: fixed before it is sent (its place, its prompt, what it should find
 * cached), and as it ended; its key among every turn of the run, and its ids as its body carries them.
 */
import type { RequestRecord } from "../schema/record.ts";

/** One turn, fixed before it is sent. */
export interface TurnPlan {
  client: number;
  round: number;
  /** Which of the working set's system prompts the conversation starts with. */
  systemIndex: number;
  promptLen: number;
  /** Tokens of the prompt that came before this turn's new user ids. */
  historyLen: number;
  /** Cached tokens the server should report: the history but its last generated token, in whole pages. */
  expectedCachedTokens: number;
  /**
   * The least it may report without counting as a miss: the expected value, or, when the last answer was
   * re-tokenized from text (approximate), the previous prompt, which the server has exactly as sent.
   */
  minCachedTokens: number;
  /** The history holds an answer re-tokenized from text, not the server's own ids. */
  approximate: boolean;
  /** The prompt's ids as serialized chunks, in order. */
  parts: readonly Uint8Array[];
}

/** One turn as it ended. */
export interface TurnResult {
  plan: TurnPlan;
  rec: RequestRecord;
}

/** A turn's key among every turn of the run: its round's place, then its conversation's. */
export const turnKey = (numClients: number, round: number, client: number): number => round * numClients + client;

const textDecoder = new TextDecoder();

/** A turn's ids as the comma-separated digits its body carries. */
export const turnIdsText = (t: TurnPlan): string =>
  t.parts
    .filter((p) => p.length > 0)
    .map((p) => textDecoder.decode(p))
    .join(",");
