/** What every pct of a sweep shares, settled once before the first pct, and the little state carried between pcts. */
import type { Backend, Control, ServerProfile } from "../backends/types.ts";
import type { RunOptions } from "../config/options.ts";
import type { RunInfo } from "../metrics/pct-record.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import type { PyRandom } from "../workload/rng.ts";
import type { PromptFeed } from "../workload/prompt-feed.ts";
import type { ShardShare } from "./plan.ts";
import type { ShardGroup } from "../shard/group.ts";

export interface SweepIo {
  /** Where the report goes (stdout in the CLI). */
  out: (text: string) => void;
  /** The run's interrupt: in-flight requests are cancelled, the current pct is written as interrupted. */
  signal?: AbortSignal;
}

export interface SweepContext {
  opts: RunOptions;
  io: SweepIo;
  backend: Backend;
  /** Control calls (flush, metrics) with the run's headers and interrupt. */
  ctl: Control;
  server: ServerProfile;
  tokenizer: LoadedTokenizer;
  /**
   * The prompt worker (token-id prompts): it owns the run's prompt generator, one across all pcts, drawn in the
   * script's order. Null for text prompts, which are drawn here from `rng`.
   */
  prompts: PromptFeed | null;
  /** The run's prompt generator when there is no worker. */
  rng: PyRandom;
  /** Shared by every line of this run. */
  runId: string;
  /** Written into the run's first pct line. */
  run: RunInfo;
  state: SweepState;
  /** This process's share of a sharded run (it sends prompts rank, rank+size, ...); null when it runs alone. */
  share: ShardShare | null;
  /** The shards this process coordinates, when it is shard 0 of several. */
  shards?: ShardGroup | null;
  /** Live progress on stderr (not in worker processes, whose stderr is the coordinator's terminal). */
  showProgress: boolean;
}

/** What one pct leaves for the next. */
export interface SweepState {
  /** Lines written so far (the first one carries `run`). */
  linesWritten: number;
  /** The TTFT model's moments over the lines measured so far. */
  ttftFit: TtftMoments | null;
  /** Leading ids of a sequence the server has cached: the next flush must make a probe of them find nothing. */
  probeIds: Uint32Array | null;
  /**
   * Text prompts: tokens of the server's chat template before the content (every chat prompt shares them), as
   * measured after the last proven flush; 0 until then.
   */
  templateHeadTokens: number;
}

/** The cache slots a warm or a flush proof must cover: each of a per-slot server's, or [null] for one shared cache. */
export function cacheSlotsOf(ctx: Pick<SweepContext, "server">): Array<number | null> {
  const n = ctx.server.cacheSlots ?? null;
  return n === null ? [null] : Array.from({ length: n }, (_, i) => i);
}

export type { ShardGroup };
