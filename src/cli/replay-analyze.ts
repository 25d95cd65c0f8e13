/** `warmbench replay TRACE --analyze`: the trace's shape and what it asks of a cache, as a table (and JSON with --output-file). */
import { EXIT } from "../errors.ts";
import { log } from "../log.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { outputFailures } from "../write-guard.ts";
import { analyzeTrace, type Distribution, type TraceAnalysis } from "../metrics/trace-analysis.ts";
import type { AnalyzeOptions } from "../replay/options.ts";
import { readTrace } from "../replay/read-trace.ts";
import { analyzeAgentic, type AgenticAnalysis } from "../metrics/agentic-analysis.ts";
import { readAgenticTraces } from "../workload/agentic/read-agentic.ts";
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

/** The LRU curve's capacities: --cache-tokens alone where given, else doublings from 64k tokens to the working set. */
function capacitiesOf(o: AnalyzeOptions, workingSetTokens: number): number[] {
  if (o.cacheTokens !== null) return [o.cacheTokens];
  const out: number[] = [];
  for (let c = 65536; c < workingSetTokens; c *= 2) out.push(c);
  return [...out, Math.max(workingSetTokens, 1)];
}

function renderAgentic(a: AgenticAnalysis, o: AnalyzeOptions, format: string): string {
  return [
    `Agentic corpus ${o.tracePath} (${format}): ${a.sessions.length} session(s), spawn rule ${o.spawn}, page size ${o.pageSize}`,
    renderTextTable(
      ["trace", "requests", "subagents", "depth", "fan_out", "concurrency", "input_tokens", "ceiling_hit"],
      a.sessions.map((s) => [
        s.traceId,
        String(s.requests),
        String(s.subagents),
        String(s.depth),
        String(s.fanOut),
        String(s.concurrency),
        String(s.inputTokens),
        ratio(s.ceilingHitRatio),
      ]),
    ),
    `Hit ratio of an infinite cache: ${ratio(a.ceilingHitRatio)}; working set: ${a.workingSetTokens} distinct prompt tokens`,
    renderTextTable(
      ["cache_tokens", "lru_hit"],
      a.lru.map((l) => [String(l.capacityTokens), ratio(l.hitRatio)]),
    ),
  ].join("\n");
}

const agenticJson = (a: AgenticAnalysis, o: AnalyzeOptions, format: string) => ({
  trace: o.tracePath,
  trace_format: format,
  spawn_rule: o.spawn,
  page_size: o.pageSize,
  ceiling_hit_ratio: a.ceilingHitRatio,
  working_set_tokens: a.workingSetTokens,
  sessions: a.sessions.map((s) => ({
    trace_id: s.traceId,
    requests: s.requests,
    subagents: s.subagents,
    depth: s.depth,
    fan_out: s.fanOut,
    concurrency: s.concurrency,
    input_tokens: s.inputTokens,
    ceiling_hit_ratio: s.ceilingHitRatio,
  })),
  lru: a.lru.map((l) => ({ cache_tokens: l.capacityTokens, hit_ratio: l.hitRatio })),
});

export function analyzeCommand(o: AnalyzeOptions, write: (text: string) => void): number {
  const read = readAgenticTraces(o.tracePath, { format: o.traceFormat, blockSize: o.trace.blockSize });
  let json: unknown;
  let text: string;
  if (read.format === "mooncake") {
    const a = analyzeTrace(readTrace(o.tracePath, o.trace), o);
    json = analysisJson(a, o);
    text = renderAnalysis(a, o.tracePath, o);
  } else {
    // The working set first (an infinite cache's), then the curve up to it.
    const whole = analyzeAgentic(read.traces, { spawn: o.spawn, pageSize: o.pageSize, capacitiesTokens: [] });
    const a = analyzeAgentic(read.traces, { spawn: o.spawn, pageSize: o.pageSize, capacitiesTokens: capacitiesOf(o, whole.workingSetTokens) });
    json = agenticJson(a, o, read.format);
    text = renderAgentic(a, o, read.format);
  }
  const written = o.outputFile === null || writeArtifact("--output-file", o.outputFile, JSON.stringify(json) + "\n");
  write(text);
  if (!written) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  return EXIT.ok;
}
