/** `warmbench replay TRACE`: a Mooncake-format trace replayed token-exact, or described with --analyze. */
import { warmbenchCommand, write } from "./command.ts";

export const replayCommand = warmbenchCommand(
  "replay",
  "Replay a Mooncake-format trace with token-exact prefixes, every request's cache hit predicted and checked (--analyze: no server)",
  async (raw) => {
    if (raw.analyze === true) {
      const { parseAnalyzeOptions } = await import("./replay-options.ts");
      const { analyzeCommand } = await import("./replay-analyze.ts");
      return analyzeCommand(parseAnalyzeOptions(raw), write);
    }
    const { replayRun } = await import("./replay-run.ts");
    return replayRun(raw);
  },
);
