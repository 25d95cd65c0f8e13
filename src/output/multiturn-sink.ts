/**
 * The multi-turn run's sink as the command line builds it: the round table on the console (stdout), each round's
 * JSONL line appended and fsynced, its turns' details and prompts (the results writer).
 */
import type { MultiturnOptions } from "../config/options.ts";
import { renderRoundRow, renderRoundTableFooter, renderRoundTableHeader, roundTitle } from "../report/rounds.ts";
import type { MultiturnSink } from "../multiturn/sink.ts";
import { formatTurnDetail } from "./details.ts";
import { openResultsWriter } from "./results-writer.ts";

/** Opens the run's output files (openResultsWriter: a usage error before anything is sent) and returns the sink. */
export function openMultiturnSink(opts: Pick<MultiturnOptions, "outputFile" | "dumpPrompts" | "requestDetails">, out: (text: string) => void): MultiturnSink {
  const files = openResultsWriter(opts);
  return {
    started: (banner) => out(renderRoundTableHeader(roundTitle(banner))),
    line(record) {
      out(renderRoundRow(record));
      files.line(record);
    },
    turns(runId, turns) {
      if (!opts.requestDetails || turns.length === 0) return;
      const lines = turns.map((t) => formatTurnDetail(runId, t.plan.client, t.plan.round, t.plan.expectedCachedTokens, t.rec, t.extra));
      files.details(lines);
    },
    prompts: (lines) => files.prompts(lines),
    ended: (rounds) => out(renderRoundTableFooter(rounds)),
  };
}
