/** The report's agentic replay runs (a line with an `agentic` key), each with its requests from its details file. */
import { log } from "../log.ts";
import { readAgenticDetails } from "./agentic-details.ts";
import type { AgenticRun } from "./agentic-sections.ts";
import type { ReportRun } from "./runs.ts";

/** Every agentic run whose details are at hand; one without them is named in a warning and left out of the pictures. */
export function agenticRuns(runs: readonly ReportRun[]): AgenticRun[] {
  return runs.flatMap((run, series) => {
    const line = run.pcts.find((l) => (l as { agentic?: unknown }).agentic !== undefined) as { agentic?: { ttft_by_context_tokens?: unknown } } | undefined;
    if (line === undefined) return [];
    const details = readAgenticDetails(run);
    if (details === null || details.requests.length === 0) {
      log.warn(`report: ${run.file}: an agentic replay without its --request-details file at hand: no swim lane for it`);
      return [];
    }
    if (details.invalid > 0) log.warn(`report: ${details.file}: ${details.invalid} line(s) without the fields the agentic pictures read, left out`);
    const bins = line.agentic?.ttft_by_context_tokens;
    return [{ label: run.label, series, requests: details.requests, bins: Array.isArray(bins) ? (bins as AgenticRun["bins"]) : [] }];
  });
}
