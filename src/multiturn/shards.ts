/**
 * The coordinator's side of a multi-turn run spread over processes: each round is one job of the shard protocol.
 * Without --round-barrier every round is released at once after the flush and the warm (each process's clients run
 * on at their own pace); with it, round r is released only once round r-1 of every process was united and written,
 * so it starts everywhere after every process finished round r-1. A round's line unites every process's turns.
 */
import { createHash } from "node:crypto";
import type { MultiturnOptions } from "../config/options.ts";
import { workloadFields } from "../config/flags/bound.ts";
import type { ClientHealth } from "../metrics/self-check.ts";
import type { ReleasedJob } from "../shard/coordinator-types.ts";
import type { ShardGroup } from "../shard/group.ts";
import { uniteShards } from "../shard/report.ts";
import type { ShardsReport } from "../schema/nested.ts";
import type { TurnResult } from "../workload/turn-plan.ts";
import { fromWireTurn } from "./turns.ts";

/**
 * Every option that shapes the conversations or their requests: all processes must agree on them. The flags' are
 * the declarations' shaping fields (config/flags: workloadFields); the rest are what multiturn derives from them or
 * from an output's presence (the first turn's length; whether turns' ids and details travel back).
 */
export function conversationHash(o: MultiturnOptions): string {
  const opts = o as unknown as Record<string, unknown>;
  const shaping = [
    ...workloadFields("multiturn").map((field) => [field, opts[field]]),
    ["firstTurnTokens", o.firstTurnTokens],
    ["dumpPrompts", o.dumpPrompts !== null],
    ["requestDetails", o.requestDetails !== null],
  ];
  const text = JSON.stringify(shaping, (_, v) => (typeof v === "bigint" || (typeof v === "number" && !Number.isFinite(v)) ? String(v) : v));
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** A round's turns from every process, with what its line says about them. */
export interface UnitedRound {
  turns: TurnResult[];
  health: ClientHealth;
  interrupted: boolean;
  report: ShardsReport;
  /** The round's window over every process's turns, ms on this clock; null when no turn ended. */
  startMs: number | null;
  endMs: number | null;
}

export class RoundShards {
  private readonly released = new Map<number, ReleasedJob>();
  /** One line per shard that disconnected, hung or failed. */
  readonly failures: string[] = [];

  /** `onFailure`: a shard failed; the caller stops the others and its own turns (what was measured is kept). */
  constructor(
    readonly group: ShardGroup,
    private readonly o: Pick<MultiturnOptions, "numRounds" | "workingSet">,
    private readonly onFailure: () => void,
  ) {}

  /** Lets every shard run round `round` (once; past the last round, nothing). */
  release(round: number): void {
    if (round >= this.o.numRounds || this.released.has(round)) return;
    const job = { t: "job" as const, job: round, pct: 0, working_set: this.o.workingSet, rate_index: 0, round };
    this.released.set(
      round,
      this.group.coordinator.releaseJob(job, (f) => {
        this.failures.push(f.message);
        this.onFailure();
      }),
    );
  }

  releaseAll(): void {
    for (let r = 0; r < this.o.numRounds; r++) this.release(r);
  }

  /** Waits for every shard's turns of `round` (released now if it was not: an interrupt cut the barrier) and unites them with ours. */
  async unite(round: number, own: readonly TurnResult[], ownHealth: ClientHealth, ownInterrupted: boolean): Promise<UnitedRound> {
    this.release(round);
    const { results, failures } = await this.released.get(round)!.done;
    const u = uniteShards(
      { records: own.map((t) => t.rec), endMs: 0, interrupted: ownInterrupted, health: ownHealth },
      results,
      this.group,
      failures.map((f) => f.message),
    );
    // uniteShards keeps our records first, then each shard's in rank order.
    const turns = [...own, ...u.records.slice(own.length).map(fromWireTurn)];
    let startMs: number | null = null;
    let endMs: number | null = null;
    for (const { rec } of turns) {
      if (rec.startMs > 0) startMs = Math.min(startMs ?? rec.startMs, rec.startMs);
      endMs = Math.max(endMs ?? 0, rec.lastEventMs, rec.startMs + rec.latencyMs);
    }
    return { turns, health: u.health, interrupted: u.interrupted || failures.length > 0, report: u.report, startMs, endMs };
  }
}
