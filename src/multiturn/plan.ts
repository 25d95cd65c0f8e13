/**
 * The numbers of a conversation, fixed before anything is sent: how long its turns get, whether the last one fits
 * the model, and the cached tokens each turn should report.
 */
import { UsageError } from "../errors.ts";
import type { ServerProfile } from "../backends/types.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { expectedCached } from "../engine/plan.ts";

type Shape = Pick<MultiturnOptions, "sharedSystemTokens" | "firstTurnTokens" | "turnTokens" | "outputLen" | "numRounds">;

/** Prompt tokens of round r's turn when every earlier turn generated --output-len tokens (ignore_eos: they do). */
export function promptLenOf(o: Shape, round: number): number {
  return o.sharedSystemTokens + o.firstTurnTokens + round * (o.outputLen + o.turnTokens);
}

/**
 * Refuses (exit 2, before any generation request) a conversation whose last turn cannot fit the model: its prompt
 * plus the output over the context length (/server_info context_length), or its prompt at or over the longest input
 * the scheduler takes (max_req_input_len, which the KV pool can make shorter). Servers that say neither are trusted.
 */
export function checkConversationFits(o: Shape, server: ServerProfile): void {
  const lastPrompt = promptLenOf(o, o.numRounds - 1);
  const shape =
    `--shared-system-tokens ${o.sharedSystemTokens} + --first-turn-tokens ${o.firstTurnTokens} + ` +
    `${o.numRounds - 1} x (--output-len ${o.outputLen} + --turn-tokens ${o.turnTokens})`;
  const context = server.info.contextLength;
  if (context !== null && lastPrompt + o.outputLen > context) {
    throw new UsageError(
      `--num-rounds ${o.numRounds}: the last turn's prompt would be ${lastPrompt} tokens (${shape}), and with ${o.outputLen} output ` +
        `tokens ${lastPrompt + o.outputLen} > the model's context length ${context} (${server.info.source}); use fewer rounds or shorter turns`,
    );
  }
  const maxInput = server.info.maxReqInputLen;
  if (maxInput !== null && lastPrompt >= maxInput) {
    throw new UsageError(
      `--num-rounds ${o.numRounds}: the last turn's prompt would be ${lastPrompt} tokens (${shape}), at or over the server's ` +
        `max_req_input_len ${maxInput}; use fewer rounds or shorter turns`,
    );
  }
}

/**
 * Cached tokens a turn should report. After a turn the server holds its prompt and every output token but the last
 * (whose KV was never computed: SGLang's cache_finished_req caches `(origin_input_ids + output_ids)[:kv_committed_len]`),
 * so the next turn should find its whole history but that token, in whole pages, at most promptLen - 1. Round 0 finds
 * the warmed system prompt.
 */
export function expectedTurnCached(historyLen: number, historyEndsWithOutput: boolean, promptLen: number, pageSize: number): number {
  return expectedCached(historyEndsWithOutput ? historyLen - 1 : historyLen, promptLen, pageSize);
}
