/**
 * The engine's face: a session is opened once per run - the tokenizer, the backend (named or detected), the server's
 * preflight (and with several replicas, each one's), the run id, the shards when the producer says - and then runs
 * points (run-point.ts) with the studies it was opened with. Producers open one and hand it plans; they never prepare
 * a server or start a shard themselves.
 */
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { EndpointNeeds } from "../backends/index.ts";
import type { Control } from "../backends/http.ts";
import type { RunInfo } from "../schema/nested.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import type { PointContext } from "./point-context.ts";
import type { JudgedLine, PointPlan, RoutePlan } from "./point-plan.ts";
import { prepareRun, type PrepareOptions } from "./prepare.ts";
import { prepareReplicas, type ReplicaSet } from "./replica-set.ts";
import { preparePoint, routerFor, runPoint, watchPoint, type PointOutcome, type PointWatches, type PreparedPoint } from "./run-point.ts";
import type { ReplicaRouter } from "./replica-router.ts";
import { newRunId, runInfo } from "./run-info.ts";
import { STUDIES } from "./studies/registered-studies.ts";
import { shardSetupOf, startShardGroup, type ShardGroup } from "../shard/group.ts";
import type { Placement } from "../shard/placement.ts";
import type { Study } from "./study.ts";

type SessionOptions = PrepareOptions & PointContext["opts"];

/** Where a point runs when it is not the session's own options and interrupt (a capacity probe's load, a shard's stop). */
interface PointAt<O> {
  opts?: O;
  signal?: AbortSignal;
  /** The point's watches, begun before its plan was (a round's, as its first turn went: watch()). */
  watches?: PointWatches;
}

export interface EngineSession<O extends SessionOptions> {
  readonly opts: O;
  readonly runId: string;
  /** Written into the run's first line. */
  readonly run: RunInfo;
  readonly ctl: Control;
  readonly tokenizer: LoadedTokenizer;
  readonly backend: Backend;
  readonly server: ServerProfile;
  /** Several replicas (--base-url A,B,...): each one's control calls and preflight; the first is `ctl` and `server`. */
  readonly replicas: ReplicaSet | undefined;
  readonly signal: AbortSignal | undefined;
  /**
   * The studies start watching a point whose requests drive themselves (a round), before its plan exists; the
   * point's runPoint takes the watches (`at.watches`) and stops them.
   */
  watch(label: string, at?: PointAt<O>): PointWatches;
  /** Runs one point: reset -> warm -> measure -> model -> studies -> lines -> gates -> sink. */
  runPoint<Line extends JudgedLine>(plan: PointPlan<Line>, at?: PointAt<O>): Promise<PointOutcome<Line>>;
  /**
   * A reset and warm ahead of points that do neither (a multi-turn run's, before round 0: its rounds then find the
   * cache their predecessors left).
   */
  prepare(plan: Pick<PointPlan<unknown>, "reset" | "warm">, router: ReplicaRouter | undefined, at?: PointAt<O>): Promise<PreparedPoint>;
  /** A router kept across points (a conversation stays on its replica from round to round); none with one server. */
  routerFor(route: RoutePlan): ReplicaRouter | undefined;
  /**
   * Starts the run's shards where `placement` has several (--workers, --shard: this process coordinates them) and
   * waits until every one joined, each told this session's run id and server and `optionsHash` (the producer's hash
   * of its workload, which every shard must match); null in one process or in a worker.
   */
  startShards(placement: Placement, optionsHash: string): Promise<ShardGroup | null>;
}

export interface OpenOptions {
  /** What the run reads from the stream (multi-turn: the generated ids), which settles `--endpoint auto`. */
  needs?: EndpointNeeds;
  /** Checks of the prepared server before the replicas and the run id (a replay's trace against its context). */
  checked?: (server: ServerProfile) => void;
  studies?: readonly Study[];
}

export async function openSession<O extends SessionOptions>(opts: O, signal: AbortSignal | undefined, o: OpenOptions = {}): Promise<EngineSession<O>> {
  const prepared = await prepareRun(opts, signal, o.needs ?? {});
  o.checked?.(prepared.server);
  const replicas = opts.replicas === undefined ? undefined : await prepareReplicas(opts, prepared);
  const studies = o.studies ?? STUDIES;
  const ctxAt = (at: PointAt<O> | undefined): PointContext => ({ ...prepared, opts: at?.opts ?? opts, io: { signal: at?.signal ?? signal }, replicas });
  const runId = newRunId();
  return {
    ...prepared,
    opts,
    runId,
    run: runInfo(opts, prepared.server, prepared.backend),
    replicas,
    signal,
    watch: (label, at) => watchPoint(ctxAt(at), label, studies),
    runPoint: (plan, at) => runPoint(ctxAt(at), plan, studies, at?.watches),
    prepare: (plan, router, at) => preparePoint(ctxAt(at), plan, router),
    routerFor: (route) => routerFor(ctxAt(undefined), route),
    startShards: (placement, optionsHash) => startShardGroup(placement, shardSetupOf(runId, optionsHash, prepared.server, prepared.backend), signal),
  };
}
