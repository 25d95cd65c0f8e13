/**
 * One client's conversation: its history as serialized id chunks (system prompt, each turn's user ids, each
 * answer's ids), and the next turn built from it. Chunks are serialized once and shared, so a turn's body is views of
 * them and nothing is re-serialized as the history grows.
 */
import { serializeIds } from "../workload/prompts.ts";
import type { PyRandom } from "../workload/rng.ts";
import { expectedTurnCached } from "./plan.ts";
import type { TurnPlan } from "../workload/turn-plan.ts";

export class Conversation {
  readonly client: number;
  readonly systemIndex: number;
  /** The client's own stream, seeded at its first turn: setting up a million conversations seeds none (a first signal is felt at once). */
  private rngOf: (() => PyRandom) | null;
  private rng: PyRandom | null = null;
  private parts: readonly Uint8Array[];
  private historyLen: number;
  private previousPromptLen = 0;
  private endsWithOutput = false;
  private approximate = false;
  /** The round of the next turn. */
  round = 0;
  /** False once a turn failed: its history is unknown, so the conversation ends there. */
  alive = true;

  constructor(client: number, systemIndex: number, system: { digits: Uint8Array; length: number } | null, rng: PyRandom | (() => PyRandom)) {
    this.client = client;
    this.systemIndex = systemIndex;
    this.rngOf = typeof rng === "function" ? rng : null;
    if (typeof rng !== "function") this.rng = rng;
    this.parts = system === null ? [] : [system.digits];
    this.historyLen = system?.length ?? 0;
  }

  /** The next turn: the history plus `turnTokens` new ids drawn from the client's own stream. */
  nextTurn(population: Uint32Array, turnTokens: number, pageSize: number): TurnPlan {
    const ids = new Uint32Array(turnTokens);
    if (this.rng === null) {
      this.rng = this.rngOf!();
      this.rngOf = null;
    }
    this.rng.choicesInto(population, ids, 0, turnTokens);
    const promptLen = this.historyLen + turnTokens;
    const expected = expectedTurnCached(this.historyLen, this.endsWithOutput, promptLen, pageSize);
    const exactPart = expectedTurnCached(this.previousPromptLen, false, promptLen, pageSize);
    return {
      client: this.client,
      round: this.round,
      systemIndex: this.systemIndex,
      promptLen,
      historyLen: this.historyLen,
      expectedCachedTokens: expected,
      minCachedTokens: this.approximate ? Math.min(expected, exactPart) : expected,
      approximate: this.approximate,
      parts: [...this.parts, serializeIds(ids)],
    };
  }

  /** The turn was answered with `outputIds`: its prompt and the answer are the history now. */
  answered(turn: TurnPlan, outputIds: Uint32Array, approximate: boolean): void {
    this.parts = outputIds.length > 0 ? [...turn.parts, serializeIds(outputIds)] : turn.parts;
    this.previousPromptLen = turn.promptLen;
    this.historyLen = turn.promptLen + outputIds.length;
    this.endsWithOutput = outputIds.length > 0;
    this.approximate = approximate;
    this.round = turn.round + 1;
  }

  /** The turn failed or was cut: nothing more is sent. */
  end(): void {
    this.alive = false;
  }
}
