/**
 * The conversations as one request source (engine/send.ts' RequestSource), sent by the engine's dispatcher in a closed
 * loop of at most `inFlight` turns: a conversation's next turn is ready once its answer is in and its think time
 * passed (and, with the round barrier, once round r-1 was written), and the next client is the ready queue's
 * policy's. A turn's intended time is the later of when it became ready and when a slot freed. A round is complete
 * once each of its turns ended; rounds complete in order (a client's turn r+1 follows its turn r). A failed turn
 * ends its conversation, and its later turns leave the source. An interrupt stops new turns; the rounds under way
 * complete, marked interrupted, from the turns that ended.
 */
import { nowMs } from "../client/clock.ts";
import type { MultiturnOptions } from "../config/options.ts";
import type { RequestSource, SelfPacedSend, SourcedRequest } from "../engine/send.ts";
import type { RequestRecord } from "../schema/record.ts";
import { orderRandom, thinkRandom, drawThinkMs } from "./rngs.ts";
import type { Conversation } from "./conversation.ts";
import type { TurnPlan } from "../workload/turn-plan.ts";
import { ReadyQueue } from "./ready-queue.ts";
import type { PyRandom } from "../workload/rng.ts";

export interface DriverHooks {
  /** Builds `conv`'s next turn as the request the engine sends. */
  build(conv: Conversation): { turn: TurnPlan; request: SourcedRequest };
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
  sendTurns: SelfPacedSend,
  signal?: AbortSignal,
): Promise<void> {
  return new Driver(conversations, inFlightLimit, o, hooks, signal).run(sendTurns);
}

const FILLED = Promise.resolve();

class Driver implements RequestSource {
  readonly failure = null;
  readonly pacesItself = true;
  private readonly queue: ReadyQueue;
  /** By client id: a process of a sharded run drives only its share of the clients. */
  private readonly byClient = new Map<number, Conversation>();
  /** Each client's think-time stream, seeded at its first think: seeding a million up front held off a first signal for seconds. */
  private readonly thinkRngs = new Map<number, PyRandom>();
  /** Turns of each round not yet ended (a conversation that ends takes its later turns off). */
  private readonly pending: number[];
  private readonly started: boolean[];
  private inFlight = 0;
  /** Turns not yet taken that may still go (a conversation that ends takes its later turns off). */
  private untaken: number;
  /** The turns taken, by position, until they end. */
  private readonly taken = new Map<number, { conv: Conversation; turn: TurnPlan }>();
  /** When each ready client became ready (nowMs clock): its next turn's intended time, at the earliest. */
  private readonly readyAt = new Map<number, number>();
  private readonly listeners: (() => void)[] = [];
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
    this.queue = new ReadyQueue(o.readyQueuePolicy, o.numClients, orderRandom(o.seed));
    for (const c of conversations) {
      this.byClient.set(c.client, c);
    }
    this.pending = new Array<number>(o.numRounds).fill(conversations.length);
    this.started = new Array<boolean>(o.numRounds).fill(false);
    this.untaken = conversations.length * o.numRounds;
  }

  async run(sendTurns: SelfPacedSend): Promise<void> {
    const done = new Promise<void>((resolve) => (this.finish = resolve));
    this.signal?.addEventListener("abort", () => this.onAbort(), { once: true });
    if (this.signal?.aborted) this.onAbort();
    for (const conv of this.conversations) this.makeReady(conv.client);
    this.checkDone();
    await sendTurns(this, this.untaken, this.limit, (position, rec) => this.onEnded(position, rec));
    await done;
  }

  ready(): boolean {
    return !this.aborted && this.queue.size > 0;
  }

  take(position: number): SourcedRequest {
    const client = this.queue.pop()!;
    const conv = this.byClient.get(client) as Conversation;
    const round = conv.round;
    if (!this.started[round]) {
      this.started[round] = true;
      this.hooks.roundStarted(round);
    }
    const { turn, request } = this.hooks.build(conv);
    this.inFlight++;
    this.untaken--;
    this.taken.set(position, { conv, turn });
    const readyAtMs = this.readyAt.get(client);
    this.readyAt.delete(client);
    return readyAtMs === undefined ? request : { ...request, readyAtMs };
  }

  onArrival(listener: () => void): void {
    this.listeners.push(listener);
  }

  filled(): Promise<void> {
    return FILLED;
  }

  exhausted(): boolean {
    return this.untaken === 0;
  }

  /** A client's next turn may go: the dispatcher is told (it starts it when a slot is free). */
  private makeReady(client: number): void {
    this.readyAt.set(client, nowMs());
    this.queue.push(client);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
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

  /** A turn ended: the dispatcher starts what became ready as it returns (it pumps after each settle). */
  private onEnded(position: number, rec: RequestRecord): void {
    const { conv, turn } = this.taken.get(position)!;
    this.taken.delete(position);
    this.inFlight--;
    if (rec.failureKind === "cancelled") conv.end();
    else this.hooks.settled(conv, turn, rec);
    this.turnEnded(turn.round);
    if (!conv.alive) {
      for (let r = turn.round + 1; r < this.o.numRounds; r++) this.turnEnded(r);
      this.untaken -= this.o.numRounds - turn.round - 1;
    } else if (conv.round < this.o.numRounds) {
      this.think(conv);
    }
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
      else this.makeReady(conv.client);
      this.checkDone();
    };
    if (delayMs <= 0) {
      becomeReady();
      return;
    }
    this.thinking.set(
      conv.client,
      setTimeout(() => {
        becomeReady();
        this.notify();
      }, delayMs),
    );
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
        for (const client of this.parked.splice(0)) this.makeReady(client);
        this.notify();
      }
      this.checkDone();
    });
  }

  private onAbort(): void {
    for (const timer of this.thinking.values()) clearTimeout(timer);
    this.thinking.clear();
    this.parked = [];
    this.queue.clear();
    this.readyAt.clear();
    this.checkDone();
  }

  /** Done once nothing is in flight, thinking, parked or ready, and every round that ran is written. */
  private checkDone(): void {
    if (this.finished || this.inFlight > 0 || this.thinking.size > 0 || this.parked.length > 0 || this.queue.size > 0) return;
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
