/**
 * Runs the conversations: at most `inFlight` turns at once, the next client chosen by the ready queue's policy, a
 * think time between a client's turns, and with the round barrier round r held until every client finished round
 * r-1 (and that round was written). A round is complete once each of its turns ended; rounds complete in order (a
 * client's turn r+1 follows its turn r). A failed turn ends its conversation. An interrupt stops new turns; the
 * rounds under way complete, marked interrupted, from the turns that ended.
 */
import type { MultiturnOptions } from "../config/options.ts";
import type { RequestRecord } from "../schema/record.ts";
import { orderRandom, thinkRandom, drawThinkMs } from "./rngs.ts";
import type { Conversation } from "./conversation.ts";
import type { TurnPlan } from "../workload/turn-plan.ts";
import { ReadyQueue } from "./ready-queue.ts";
import type { PyRandom } from "../workload/rng.ts";

export interface DriverHooks {
  /** Builds `conv`'s next turn and sends it; the promise never rejects (streamRequest's contract). */
  send(conv: Conversation): { turn: TurnPlan; done: Promise<RequestRecord> };
  /** A turn ended (not cancelled): record it and advance or end its conversation. Synchronous, on the hot path. */
  settled(conv: Conversation, turn: TurnPlan, rec: RequestRecord): void;
  /** The first turn of `round` is about to go. */
  roundStarted(round: number): void;
  /**
   * Every turn of `round` ended (or was cut by an interrupt); awaited before a barrier releases the next round. Called
   * for every round in order, `ran` false for one no turn of this process started (its conversations had ended):
   * other processes' turns of it may still be to unite.
   */
  roundComplete(round: number, interrupted: boolean, ran: boolean): Promise<void>;
}

type Options = Pick<MultiturnOptions, "numClients" | "numRounds" | "roundBarrier" | "thinkTime" | "readyQueuePolicy" | "seed">;

export function driveConversations(
  conversations: readonly Conversation[],
  inFlightLimit: number,
  o: Options,
  hooks: DriverHooks,
  signal?: AbortSignal,
): Promise<void> {
  return new Driver(conversations, inFlightLimit, o, hooks, signal).run();
}

class Driver {
  private readonly ready: ReadyQueue;
  /** By client id: a process of a sharded run drives only its share of the clients. */
  private readonly byClient = new Map<number, Conversation>();
  /** Each client's think-time stream, seeded at its first think: seeding a million up front held off a first signal for seconds. */
  private readonly thinkRngs = new Map<number, PyRandom>();
  /** Turns of each round not yet ended (a conversation that ends takes its later turns off). */
  private readonly pending: number[];
  private readonly started: boolean[];
  private inFlight = 0;
  /** With the barrier: the highest round allowed to start. */
  private released = 0;
  /** Clients done thinking whose next round the barrier still holds. */
  private parked: number[] = [];
  private readonly thinking = new Map<number, ReturnType<typeof setTimeout>>();
  private nextToComplete = 0;
  private emitting: Promise<void> = Promise.resolve();
  private finish: () => void = () => {};
  private finished = false;

  constructor(
    private readonly conversations: readonly Conversation[],
    private readonly limit: number,
    private readonly o: Options,
    private readonly hooks: DriverHooks,
    private readonly signal?: AbortSignal,
  ) {
    this.ready = new ReadyQueue(o.readyQueuePolicy, o.numClients, orderRandom(o.seed));
    for (const c of conversations) {
      this.byClient.set(c.client, c);
    }
    this.pending = new Array<number>(o.numRounds).fill(conversations.length);
    this.started = new Array<boolean>(o.numRounds).fill(false);
  }

  run(): Promise<void> {
    const done = new Promise<void>((resolve) => (this.finish = resolve));
    this.signal?.addEventListener("abort", () => this.onAbort(), { once: true });
    if (this.signal?.aborted) this.onAbort();
    for (const conv of this.conversations) this.ready.push(conv.client);
    this.pump();
    this.checkDone();
    return done;
  }

  private thinkRngOf(client: number): PyRandom {
    let rng = this.thinkRngs.get(client);
    if (rng === undefined) {
      rng = thinkRandom(this.o.seed, client);
      this.thinkRngs.set(client, rng);
    }
    return rng;
  }

  private get aborted(): boolean {
    return this.signal?.aborted === true;
  }

  private pump(): void {
    while (!this.aborted && this.inFlight < this.limit) {
      const client = this.ready.pop();
      if (client === undefined) return;
      this.start(this.byClient.get(client) as Conversation);
    }
  }

  private start(conv: Conversation): void {
    const round = conv.round;
    if (!this.started[round]) {
      this.started[round] = true;
      this.hooks.roundStarted(round);
    }
    const { turn, done } = this.hooks.send(conv);
    this.inFlight++;
    void done.then((rec) => this.onEnded(conv, turn, rec));
  }

  private onEnded(conv: Conversation, turn: TurnPlan, rec: RequestRecord): void {
    this.inFlight--;
    if (rec.failureKind === "cancelled") conv.end();
    else this.hooks.settled(conv, turn, rec);
    this.turnEnded(turn.round);
    if (!conv.alive) for (let r = turn.round + 1; r < this.o.numRounds; r++) this.turnEnded(r);
    else if (conv.round < this.o.numRounds) this.think(conv);
    this.pump();
    this.checkDone();
  }

  /** The client's next turn becomes ready after its think time (and, with the barrier, once its round is released). */
  private think(conv: Conversation): void {
    const delayMs = drawThinkMs(this.o.thinkTime, this.thinkRngOf(conv.client));
    const becomeReady = (): void => {
      this.thinking.delete(conv.client);
      if (this.aborted) {
        this.checkDone();
        return;
      }
      if (this.o.roundBarrier && conv.round > this.released) this.parked.push(conv.client);
      else this.ready.push(conv.client);
      this.pump();
      this.checkDone();
    };
    if (delayMs <= 0) {
      becomeReady();
      return;
    }
    this.thinking.set(conv.client, setTimeout(becomeReady, delayMs));
  }

  private turnEnded(round: number): void {
    this.pending[round] = (this.pending[round] as number) - 1;
    while (this.nextToComplete < this.o.numRounds && this.pending[this.nextToComplete] === 0) {
      // After an interrupt a round completes because its turns were cancelled: it was cut short.
      this.complete(this.nextToComplete++, this.aborted);
    }
  }

  /** Rounds are written in order, one at a time. */
  private complete(round: number, interrupted: boolean): void {
    const ran = this.started[round] === true;
    this.emitting = this.emitting.then(async () => {
      await this.hooks.roundComplete(round, interrupted, ran);
      if (this.o.roundBarrier && !this.aborted) {
        this.released = round + 1;
        for (const client of this.parked.splice(0)) this.ready.push(client);
        this.pump();
      }
      this.checkDone();
    });
  }

  private onAbort(): void {
    for (const timer of this.thinking.values()) clearTimeout(timer);
    this.thinking.clear();
    this.parked = [];
    this.ready.clear();
    this.checkDone();
  }

  /** Done once nothing is in flight, thinking, parked or ready, and every round that ran is written. */
  private checkDone(): void {
    if (this.finished || this.inFlight > 0 || this.thinking.size > 0 || this.parked.length > 0 || this.ready.size > 0) return;
    if (this.aborted) {
      // Rounds cut short: complete them from the turns that ended.
      while (this.nextToComplete < this.o.numRounds) this.complete(this.nextToComplete++, true);
    } else if (this.nextToComplete < this.o.numRounds) {
      return;
    }
    this.finished = true;
    void this.emitting.then(() => this.finish());
  }
}
