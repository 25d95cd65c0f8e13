/**
 * The replay's sink as the command line builds it: each line on the console and appended (fsynced) to --output-file,
 * every request's details with its trace line and predicted range (--request-details) and its prompt (--dump-prompts)
 * through the results writer, live progress on stderr.
 */
import { renderConsole } from "../report/console.ts";
import { labelOf } from "../schema/axes.ts";
import type { ReplayOptions } from "../replay/options.ts";
import type { ReplaySink } from "../replay/sink.ts";
import { formatReplayDetail } from "./details.ts";
import { startProgress } from "./progress.ts";
import { openResultsWriter } from "./results-writer.ts";

/** Opens the replay's output files (openResultsWriter: a usage error before anything is sent) and returns the sink. */
export function openReplaySink(opts: Pick<ReplayOptions, "outputFile" | "dumpPrompts" | "requestDetails" | "quiet">, out: (text: string) => void): ReplaySink {
  const files = openResultsWriter(opts);
  return {
    line(record) {
      out(`${record.window === undefined ? "whole replay" : `window ${record.window}`} (${labelOf(record)})`);
      out(renderConsole(record));
      files.line(record);
    },
    details(runId, records, requests, checked, extra) {
      if (!opts.requestDetails) return;
      const lines = records.map((r) => {
        const c = checked.get(r.index)!;
        const t = requests[r.index]!;
        return formatReplayDetail(runId, r, {
          trace_line: t.line,
          timestamp_ms: t.timestampMs,
          expected_cached_tokens_lower: c.lower,
          expected_cached_tokens_upper: c.upper,
          expected_cached_tokens_infinite: c.infinite,
          expected_cached_tokens_ceiling: c.ceiling,
          predicted_eviction_tokens: c.evictionLoss,
          cache_verdict: c.verdict,
          ...extra?.(r.index),
        });
      });
      files.details(lines);
    },
    prompts: (lines) => files.prompts(lines),
    progress: (total, label) => startProgress(total, label, { quiet: opts.quiet }),
  };
}
