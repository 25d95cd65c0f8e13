/**
 * The plan of one point, as a producer hands it to the engine (run-point.ts): everything the producer knows of the
 * point - what the reset keeps clear of, how its requests route and what is warmed where, the requests themselves
 * (a source, arrivals or a concurrency), how the cache model reads each request, what the studies read of it - and
 * how its measured records become lines and reach its sink. The engine does the rest, always in one order: reset
 * (one server or every replica) -> warm (through the route) -> measure -> the cache model -> each study -> build the
 * lines -> gates -> sink.
 */
import type { CacheSequence } from "../metrics/cache-model.ts";
import type { RequestExpectation } from "../metrics/point-expectations.ts";
import type { GateResult } from "../schema/nested.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { FidelitySample } from "./fidelity-check.ts";
import type { MeasureOptions, Measurement } from "./measure.ts";
import type { ReplicaRouter, RouteKeys } from "./replica-router.ts";
import type { CacheReset, ResetInput } from "./reset-cache.ts";
import type { KeyGroup } from "../schema/build-line.ts";
import type { WarmRequest, WarmResult, WarmWording } from "./warm.ts";

/** How a point's requests route over several replicas (by the client). */
export interface RoutePlan {
  /** A request's keys (its session, its prefix) by request index. */
  keysOf(index: number): RouteKeys;
  /** The prefixes warmed before the point (the warm's groups), which the oracle's model starts with. */
  prefixes: readonly number[];
  /** Tokens of one prefix (how many a replica's cache holds); 0: none. */
  prefixTokens: number;
  /** The first request that carries each prefix (where a spreading policy first sends it). */
  firstIndexOf?(prefix: number): number;
  /** Every prefix warmed on every replica (--warm-replicas all, or a replay that cannot tell). */
  warmedEverywhere: boolean;
  /** What a routed request's details add after where it went (its prefix group). */
  detailsOf?(index: number): Record<string, unknown>;
}

/** What the point warms: groups (prefixes, system prompts) of requests, each group on the replicas the route first sends it. */
export interface WarmPlan {
  /** The groups, in the order warmed (the first warmed is then the least recently used). */
  groups: number;
  /** The warm requests of these groups, in order, on a server with these cache slots ([null]: one shared cache). */
  requestsOf(groups: readonly number[], slots: readonly (number | null)[]): WarmRequest[];
  /** Every group on every replica, whatever the route (a conversation may be sent anywhere). */
  everywhere?: boolean;
  /** The log line before a server's warm: `groups` of them, on `slots` cache slots, at `url` (null: the one server). */
  announce(groups: number, slots: number, url: string | null): string;
  say: WarmWording;
}

/** How the one cache model reads the point's requests. */
export interface CacheView {
  /** A request's prompt (by request index); undefined: not modelled. */
  sequenceOf(index: number): CacheSequence | undefined;
  /** What a request's end caches where it is not its prompt plus pages of its own. */
  finishedOf?(index: number): CacheSequence | undefined;
  /** What warm group g left cached. */
  warmedSequenceOf(group: number): CacheSequence;
  /** What the flush's proof left cached (a probe of `length` tokens sharing nothing with any prompt); absent: not counted. */
  probeSequenceOf?(length: number): CacheSequence;
  /** The prefix a request routes on, for the ledger's home placement; null: none. */
  homeKeyOf(index: number): number | null;
  /** Tokens per hash id of sequences without their own segment ends. */
  blockSize: number;
  /** The capacity to model instead of the server's (replay's --cache-tokens). */
  capacityTokens?: number | null;
  /**
   * Every request the model reads where it is more than the point's own (a round's: every turn since round 0, whose
   * pages its history hit); the point's requests are the ones judged and accounted. Absent: the point's.
   */
  history?: readonly RequestRecord[];
  /** What each server held before the history's first send, where the point's warm did not put it there (a round's: the system prompts). */
  prior?: readonly CacheSequence[];
  /**
   * A server with a cache per slot (llama.cpp): what each of its `slots` held at the history's first send, where the
   * view knows it (a round's: the system prompts, pinned to slot i mod the slot count). Read only when the server
   * named every request's slot (its `id_slot`), so that no slot choice is guessed.
   */
  slotsHeld?(slots: number): readonly (CacheSequence | null)[];
  /** False: the ranges are not judged (a turn's pages unknown, or a cache per slot); the ledger still reads the model. */
  judged?: boolean;
}

/** One server (or replica) as the model sees the point: its capacity and what it held before the first send. */
export interface ModelledServer {
  url: string;
  capacityTokens: number | null;
  prior: readonly CacheSequence[];
  /** A server with a cache per slot (llama.cpp): what each slot held at the first send; absent: one shared paged cache. */
  slots?: readonly (CacheSequence | null)[];
}

/** A point once measured, before its lines: what every study and the producer's build read. */
export interface MeasuredPoint {
  reset: CacheReset;
  warm: WarmResult;
  measurement: Measurement;
  /** Several replicas: where each request went. */
  router: ReplicaRouter | undefined;
  /** The modelled servers (one, or each replica); empty where the model does not apply. */
  servers: readonly ModelledServer[];
  /** Each request's expected cached range; null where the model does not apply (a cache per slot). */
  ranges: ReadonlyMap<number, RequestExpectation> | null;
}

/** The line a point's build makes: gates are judged on it by the engine. */
export interface JudgedLine {
  gates: GateResult[];
}

export interface PointPlan<Line> {
  /** Before the reset (a sweep's banner). */
  started?(): void;
  /** Null: no reset (a round after the first, which finds the cache its predecessors left). */
  reset: ResetInput | null;
  /** Null: one server, or requests that do not route (the router in front decides); a router: the run's (a conversation stays put across rounds). */
  route: RoutePlan | { router: ReplicaRouter } | null;
  /** Null: nothing to warm. */
  warm: WarmPlan | null;
  /**
   * The requests, as the engine's measure sends them (`ctx` is the engine's, with the point's router); or, for a
   * request source that drives itself (multi-turn conversations), the measurement it made.
   */
  send: Omit<MeasureOptions, "ctx"> | { measured: Measurement };
  /** After the measurement, on every path (a prompt stream to close). */
  sent?(): void;
  /** Null: the model does not apply (a server with a cache per slot, which the engine pins and proves instead). */
  cache: CacheView | null;
  /** What the fidelity study asks of the point (--check-fidelity): its samples and their answers' length. */
  fidelity?: { samples(point: MeasuredPoint): FidelitySample[]; outputLen: number } | null;
  /** How the point's lines are made, judged and sent out (the sweep's: the engine's own, engine/sweep-lines.ts). */
  lines: PointLines<Line>;
}

/** How a point's measurement becomes its lines, how each is judged, and where they go. */
export interface PointLines<Line> {
  /** The point's lines from its measurement and its studies' results. */
  build(point: MeasuredPoint, studies: readonly StudyResult[]): Line[];
  /** The gates of a line; absent: the run's gates judged on it. */
  judge?(line: Line): GateResult[];
  /** The lines to the sink, with what each request's details add (undefined: nothing). */
  emit(lines: readonly Line[], point: MeasuredPoint, detailsOf: ((index: number) => Record<string, unknown>) | undefined): void;
}

/** A study's keys (engine/study.ts): carried by a sweep's lines and a round's alike. */
export type StudyKeys = KeyGroup<"sweep"> & KeyGroup<"round">;

/** What a study gives a point. */
export interface StudyOutcome {
  keys: StudyKeys;
  /** Samples its keys rest on, by the evidence block's name for them (`fidelity`, `ledger`). */
  samples: Readonly<Record<string, number>>;
  /** What a request's details add (by request index); absent: nothing. */
  details?: (index: number) => Record<string, unknown> | undefined;
}

/** One study's result on a point, by its name (the line's group of its keys). */
export interface StudyResult extends StudyOutcome {
  name: string;
}
