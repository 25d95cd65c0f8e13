/** What every part of a multi-turn run shares, settled once before the first turn. */
import type { ReplicaRouter } from "../engine/replica-router.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import type { MultiturnOptions } from "../config/options.ts";
import type { RunInfo } from "../schema/nested.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import type { MultiturnSink } from "./sink.ts";

export interface MultiturnIo {
  /** Where the rounds go (the console, the JSONL file, the details: built by the command line). */
  sink: MultiturnSink;
  /** The run's interrupt: in-flight turns are cancelled, the rounds under way are written as interrupted. */
  signal?: AbortSignal;
}

export interface MultiturnContext {
  opts: MultiturnOptions;
  io: MultiturnIo;
  backend: Backend;
  ctl: Control;
  server: ServerProfile;
  tokenizer: LoadedTokenizer;
  runId: string;
  /** Written into the run's first round line. */
  run: RunInfo;
  /** Several replicas (--base-url A,B,...): the turns' router, kept across rounds. */
  router?: ReplicaRouter;
}
