/**
 * The replay's sink: each line on the console and appended (fsynced) to --output-file, every request's details
 * with its trace line and predicted range (--request-details), live progress on stderr.
 */
import { appendFileSync } from "node:fs";
import { appendJsonlLine } from "../output/jsonl-file.ts";
import { formatReplayDetail } from "../output/details.ts";
import { guardedWrite } from "../write-guard.ts";
import { openOutputs } from "../output/files.ts";
import { startProgress } from "../output/progress.ts";
import { renderConsole } from "../report/console.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { labelOf } from "../schema/axes.ts";
import type { ReplayOptions } from "../replay/options.ts";
import type { ReplaySink } from "../replay/sink.ts";

export function openReplaySink(opts: Pick<ReplayOptions, "outputFile" | "dumpPrompts" | "requestDetails" | "quiet">, out: (text: string) => void): ReplaySink {
  openOutputs(opts);
  return {
    line(record) {
      out(`${record.window === undefined ? "whole replay" : `window ${record.window}`} (${labelOf(record)})`);
      out(renderConsole(record));
      const path = opts.outputFile;
      if (path) guardedWrite("--output-file", path, () => appendJsonlLine(path, formatJsonl(record)));
    },
    details(runId, records, requests, checked) {
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
          predicted_eviction_tokens: c.evictionLoss,
          cache_verdict: c.verdict,
        });
      });
      const path = opts.requestDetails;
      if (lines.length > 0) guardedWrite("--request-details", path, () => appendFileSync(path, lines.join("\n") + "\n"));
    },
    progress: (total, label) => startProgress(total, label, { quiet: opts.quiet }),
  };
}
