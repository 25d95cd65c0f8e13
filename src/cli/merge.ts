/** `warmbench merge FILES... -o OUT`: one results file from uncoordinated runs, appended to OUT (one line per point). */
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import { outputFailures } from "../write-guard.ts";
import type { ParsedFlags } from "./command.ts";
import { openResultsWriter } from "../output/results-writer.ts";
import { mergeResults } from "../report/merge.ts";
import { parseDetails, type DetailSample } from "../report/merge-details.ts";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readPointRuns } from "../report/point-runs.ts";
import { readResultsText } from "../report/runs.ts";

/**
 * The run's --request-details file, as its header names it (as given, else beside the results file), read; null when
 * the run wrote none or it is gone: merge then takes its percentiles from the histograms and says so in the line.
 */
function detailsOf(resultsFile: string, first: object | undefined): { file: string; samples: DetailSample[] } | null {
  const options = (first as { run?: { options?: Record<string, unknown> } } | undefined)?.run?.options;
  const given = options?.request_details;
  if (typeof given !== "string" || given === "") return null;
  for (const path of [given, join(dirname(resultsFile), basename(given))]) {
    if (!existsSync(path)) continue;
    const samples = parseDetails(readFileSync(path, "utf8"));
    log.debug(`merge: ${resultsFile}'s request details from ${path} (${samples.length} requests)`);
    return { file: path, samples };
  }
  log.warn(`merge: ${resultsFile} names request details ${given}, which is not there: its percentiles come from the histograms`);
  return null;
}

export async function mergeCommand(raw: ParsedFlags): Promise<number> {
  const files = raw._.filter((f) => f !== "");
  const out = typeof raw["output-file"] === "string" ? raw["output-file"] : undefined;
  if (files.length < 2) throw new UsageError("merge: expects two or more JSONL results files (warmbench merge A.jsonl B.jsonl -o M.jsonl)");
  if (out === undefined) throw new UsageError("merge: expects --output-file FILE (-o FILE), where the merged lines go");
  const merged = openResultsWriter({ outputFile: out, dumpPrompts: null, requestDetails: null });
  const lines = mergeResults(
    files.map((name) => {
      const runs = readPointRuns(readResultsText(name, "merge"), name).map((run) => run.lines);
      return { name, runs, details: detailsOf(name, runs[0]?.[0]) };
    }),
    { allowCopy: raw["allow-copy"] === true },
  );
  for (const line of lines) merged.line(line);
  if (outputFailures().length > 0) return EXIT.outputFailed;
  const what = lines[0] !== undefined && "type" in lines[0] ? "round" : "pct";
  log.info(`merged ${files.length} runs into ${lines.length} ${what} line(s) in ${out}`);
  return EXIT.ok;
}
