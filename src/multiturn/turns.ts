/**
 * What every process of a multi-turn run does the same way: draw the system prompts, build its share of the
 * conversations, send a conversation's next turn and take its answer into the history; and a turn on the shard
 * protocol's wire (the record plus its plan as flat fields, the only kind of extra field a wire record may carry).
 */
import type { BodyTemplate } from "../backends/body.ts";
import { bodyFromParts } from "../backends/body.ts";
import { resolveGeneratedText } from "../client/stream-events.ts";
import type { RequestRecord } from "../schema/record.ts";
import { turnRequestIdOf } from "../engine/request-id.ts";
import { toWireRecord, type WireRecord } from "../shard/messages.ts";
import { serializeIds } from "../workload/prompts.ts";
import { PyRandom } from "../workload/rng.ts";
import type { MultiturnContext } from "./context.ts";
import { Conversation } from "./conversation.ts";
import { turnIdsText, turnKey, type TurnPlan, type TurnResult } from "../workload/turn-plan.ts";
import type { DriverHooks } from "./driver.ts";
import { resolveTurnOutput } from "../engine/output-ids.ts";
import { turnRandom } from "./rngs.ts";

/** This process's part of a sharded run: clients rank, rank + size, ...; null: every client. */
export type ClientShare = { rank: number; size: number } | null;

/** The working set's system prompts, drawn from random.Random(seed) in order, as the sweep draws its prefixes. */
export function drawSystemPrompts(ctx: Pick<MultiturnContext, "opts" | "tokenizer">): Uint32Array[] {
  const { opts, tokenizer } = ctx;
  const rng = new PyRandom(opts.seed);
  const systems: Uint32Array[] = [];
  for (let k = 0; k < (opts.sharedSystemTokens > 0 ? opts.workingSet : 0); k++) {
    const ids = new Uint32Array(opts.sharedSystemTokens);
    rng.choicesInto(tokenizer.population, ids, 0, ids.length);
    systems.push(ids);
  }
  return systems;
}

/** The conversations this process drives: client c starts with system prompt c mod K and draws from its own stream. */
export function conversationsOf(ctx: MultiturnContext, systems: readonly Uint32Array[], share: ClientShare): Conversation[] {
  const { opts } = ctx;
  const parts = systems.map((ids) => ({ digits: serializeIds(ids), length: ids.length }));
  const out: Conversation[] = [];
  for (let c = share?.rank ?? 0; c < opts.numClients; c += share?.size ?? 1) {
    const slot = c % opts.workingSet;
    out.push(new Conversation(c, slot, parts[slot] ?? null, () => turnRandom(opts.seed, c)));
  }
  return out;
}

/** Requests in flight in this process: its share of --max-concurrency (every client when 0), at least one. */
export function inFlightOf(limit: number, share: ClientShare): number {
  if (share === null) return limit;
  return Math.max(1, Math.floor(limit / share.size) + (share.rank < limit % share.size ? 1 : 0));
}

/** The driver's build and settle hooks: `ended` receives every turn that ended (not cancelled) with its record. */
export function turnHooks(
  ctx: MultiturnContext,
  template: BodyTemplate,
  noted: { sent(turn: TurnPlan): void; ended(turn: TurnPlan, rec: RequestRecord): void },
): Pick<DriverHooks, "build" | "settled"> {
  const { opts, backend, server, tokenizer } = ctx;
  return {
    build(conv) {
      const turnTokens = conv.round === 0 ? opts.firstTurnTokens : opts.turnTokens;
      const turn = conv.nextTurn(tokenizer.population, turnTokens, server.pageSize);
      const requestId = opts.requestDetails ? turnRequestIdOf(ctx.runId, conv.client, turn.round) : undefined;
      noted.sent(turn);
      const request = {
        body: bodyFromParts(template, turn.parts),
        shape: { index: conv.client, promptLen: turn.promptLen, maxNewTokens: opts.outputLen, requestId },
        // Several replicas: the turn goes where the router sends it (keyed by round and conversation).
        routeKey: turnKey(opts.numClients, turn.round, conv.client),
      };
      return { turn, request };
    },
    settled(conv, turn, rec) {
      if (rec.ok) {
        const output = resolveTurnOutput(rec, backend, server.textMode, tokenizer);
        conv.answered(turn, output.ids, output.approximate);
      } else {
        conv.end();
      }
      noted.ended(turn, rec);
    },
  };
}

const textEncoder = new TextEncoder();

/** A turn for the coordinator: its record and its plan (`withIds`: its prompt too, for --dump-prompts). */
export function toWireTurn(t: TurnResult, withIds: boolean): WireRecord {
  resolveGeneratedText(t.rec);
  const p = t.plan;
  return {
    ...toWireRecord(t.rec, performance.timeOrigin),
    turnClient: p.client,
    turnRound: p.round,
    turnSystemIndex: p.systemIndex,
    turnPromptLen: p.promptLen,
    turnHistoryLen: p.historyLen,
    turnExpectedCachedTokens: p.expectedCachedTokens,
    turnMinCachedTokens: p.minCachedTokens,
    turnApproximate: p.approximate,
    ...(withIds ? { turnIds: turnIdsText(p) } : {}),
  };
}

/** A shard's turn back from the wire (fromWireRecord already put its times on this clock); a bad plan field throws. */
export function fromWireTurn(rec: RequestRecord): TurnResult {
  const r = rec as unknown as Record<string, unknown>;
  const int = (k: string): number => {
    const v = r[k];
    if (!Number.isSafeInteger(v)) throw new Error(`a shard's turn has no integer ${k}`);
    delete r[k];
    return v as number;
  };
  const ids = typeof r.turnIds === "string" ? r.turnIds : "";
  const approximate = r.turnApproximate === true;
  delete r.turnIds;
  delete r.turnApproximate;
  const plan: TurnPlan = {
    client: int("turnClient"),
    round: int("turnRound"),
    systemIndex: int("turnSystemIndex"),
    promptLen: int("turnPromptLen"),
    historyLen: int("turnHistoryLen"),
    expectedCachedTokens: int("turnExpectedCachedTokens"),
    minCachedTokens: int("turnMinCachedTokens"),
    approximate,
    parts: ids === "" ? [] : [textEncoder.encode(ids)],
  };
  return { plan, rec };
}
