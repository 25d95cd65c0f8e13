/** What every pct of a sweep shares, settled once before the first pct, and the little state carried between pcts. */
import type { Backend, Control, ServerProfile } from "../backends/types.ts";
import type { RunOptions } from "../options.ts";
import type { RunInfo } from "../metrics/pct-record.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import type { PromptFeed } from "../workload/prompt-feed.ts";

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
  /** The prompt worker: one generator across all pcts, drawn in the script's order. */
  prompts: PromptFeed;
  /** Shared by every line of this run. */
  runId: string;
  /** Written into the run's first pct line. */
  run: RunInfo;
  state: SweepState;
}

/** What one pct leaves for the next. */
export interface SweepState {
  /** Lines written so far (the first one carries `run`). */
  linesWritten: number;
  /** The TTFT model's moments over the lines measured so far. */
  ttftFit: TtftMoments | null;
  /** Leading ids of a sequence the server has cached: the next flush must make a probe of them find nothing. */
  probeIds: Uint32Array | null;
}
