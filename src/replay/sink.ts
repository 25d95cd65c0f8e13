/** Where a replay's results go (built by the command line, src/output/replay-sink.ts): its lines, its requests and prompts, progress. */
import type { PromptDump, ReplayLineSink, StartProgress } from "../engine/sink.ts";

export interface ReplaySink extends ReplayLineSink, PromptDump {
  progress: StartProgress;
}
