/** What every line of a sweep shares, settled once before the first, and the little state carried between lines. */
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import type { RunOptions } from "../config/options.ts";
import type { RunInfo } from "../schema/nested.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import type { PyRandom } from "../workload/rng.ts";
import type { PromptFeed } from "../workload/prompt-feed.ts";
import type { ShardShare } from "../engine/plan.ts";
import type { ShardGroup } from "../shard/group.ts";
import type { EngineSession } from "../engine/open-session.ts";
import type { SweepSink } from "./sink.ts";

export interface SweepIo {
  /** Where the lines go (the console, the JSONL file, the details: built by the command line). */
  sink: SweepSink;
  /** The run's interrupt: in-flight requests are cancelled, the current line is written as interrupted. */
  signal?: AbortSignal;
}

/** Settled before the first line; no stage changes it (what changes between lines is SweepState, passed explicitly). */
export interface SweepContext {
  opts: RunOptions;
  /** A capacity probe's place in its search: the axis the engine's builder gives the line (absent in a sweep). */
  probe?: number;
  /** Live progress's name for the line, where its planner gave one (a probe: its load). */
  lineLabel?: string;
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
  /** Written into the run's first line. */
  run: RunInfo;
  /** This process's share of a sharded run (it sends prompts rank, rank+size, ...); null when it runs alone. */
  share: ShardShare | null;
  /** The shards this process coordinates, when it is shard 0 of several. */
  shards?: ShardGroup | null;
  /** The engine's session, which runs each line (absent in a shard worker, which only sends its share). */
  session?: EngineSession<RunOptions>;
}

/** What one line leaves for the next: an input of each line, and a new value returned by it. */
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

export const FIRST_LINE: SweepState = { linesWritten: 0, ttftFit: null, probeIds: null, templateHeadTokens: 0 };
