/** `warmbench replay TRACE --analyze`: the trace's shape and what it asks of a cache, as a table (and JSON with --output-file). */
import { EXIT } from "../errors.ts";
import { log } from "../log.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { outputFailures } from "../write-guard.ts";
import { analyzeTrace, type Distribution, type TraceAnalysis } from "../replay/analyze.ts";
import type { AnalyzeOptions } from "../replay/options.ts";
import { readTrace } from "../replay/read-trace.ts";
import { formatCell, renderTextTable } from "../report/text-table.ts";

const dist = (d: Distribution): string[] => [d.min, d.mean, d.p50, d.p90, d.p99, d.max].map((v) => formatCell(v, 1));
const ratio = (v: number | null): string => (v === null ? "-" : v.toFixed(4));

function renderAnalysis(a: TraceAnalysis, path: string, o: AnalyzeOptions): string {
  const cache = a.cacheTokens === null ? "" : `; an LRU cache of ${a.cacheTokens} tokens keeps ${ratio(a.lruHitRatio)}`;
  return [
    `Trace ${path}: ${a.requests} requests over ${formatCell(a.durationS, 1)} s (block size ${o.trace.blockSize}, page size ${o.pageSize})`,
    renderTextTable(
      ["tokens", "min", "mean", "p50", "p90", "p99", "max"],
      [
        ["input_length", ...dist(a.inputLength)],
        ["output_length", ...dist(a.outputLength)],
      ],
    ),
    `Hit ratio of an infinite cache: ${ratio(a.infiniteHitRatio)}${cache}`,
    `Working set: ${a.workingSetTokens} distinct prompt tokens${a.cacheTokens === null ? "" : a.workingSetTokens <= a.cacheTokens ? " (fits the cache)" : " (exceeds the cache)"}`,
    renderTextTable(
      ["window", "from_s", "requests", "input_tokens", "working_set_tokens", "fits", "infinite_hit", "lru_hit"],
      a.windows.map((w) => [
        String(w.window),
        formatCell(w.window * o.windowS, 1),
        String(w.requests),
        String(w.inputTokens),
        String(w.workingSetTokens),
        a.cacheTokens === null ? "-" : w.workingSetTokens <= a.cacheTokens ? "yes" : "no",
        ratio(w.infiniteHitRatio),
        ratio(w.lruHitRatio),
      ]),
    ),
  ].join("\n");
}

/** The analysis as JSON, snake_case. */
const analysisJson = (a: TraceAnalysis, o: AnalyzeOptions) => ({
  trace: o.tracePath,
  block_size: o.trace.blockSize,
  page_size: o.pageSize,
  requests: a.requests,
  duration_s: a.durationS,
  input_length: a.inputLength,
  output_length: a.outputLength,
  infinite_hit_ratio: a.infiniteHitRatio,
  lru_hit_ratio: a.lruHitRatio,
  working_set_tokens: a.workingSetTokens,
  cache_tokens: a.cacheTokens,
  window_s: o.windowS,
  windows: a.windows.map((w) => ({
    window: w.window,
    requests: w.requests,
    input_tokens: w.inputTokens,
    working_set_tokens: w.workingSetTokens,
    infinite_hit_ratio: w.infiniteHitRatio,
    lru_hit_ratio: w.lruHitRatio,
  })),
});

export function analyzeCommand(o: AnalyzeOptions, write: (text: string) => void): number {
  const trace = readTrace(o.tracePath, o.trace);
  const a = analyzeTrace(trace, o);
  const written = o.outputFile === null || writeArtifact("--output-file", o.outputFile, JSON.stringify(analysisJson(a, o)) + "\n");
  write(renderAnalysis(a, o.tracePath, o));
  if (!written) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  return EXIT.ok;
}
