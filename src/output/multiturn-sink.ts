/**
 * The multi-turn run's sink as the command line builds it: the round table on the console (stdout), each round's
 * JSONL line appended and fsynced, and its turns' details.
 */
import { appendFileSync } from "node:fs";
import type { MultiturnOptions } from "../config/options.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { guardedWrite } from "../write-guard.ts";
import { renderRoundRow, renderRoundTableFooter, renderRoundTableHeader, roundTitle } from "../report/rounds.ts";
import type { MultiturnSink } from "../multiturn/sink.ts";
import { formatTurnDetail } from "./details.ts";
import { openOutputs } from "./files.ts";
import { appendJsonlLine } from "./jsonl-file.ts";

/** Opens the run's output files (openOutputs: a usage error before anything is sent) and returns the sink. */
export function openMultiturnSink(opts: Pick<MultiturnOptions, "outputFile" | "dumpPrompts" | "requestDetails">, out: (text: string) => void): MultiturnSink {
  openOutputs(opts);
  return {
    started: (banner) => out(renderRoundTableHeader(roundTitle(banner))),
    line(record) {
      out(renderRoundRow(record));
      const path = opts.outputFile;
      if (path) guardedWrite("--output-file", path, () => appendJsonlLine(path, formatJsonl(record)));
    },
    turns(runId, turns) {
      if (!opts.requestDetails || turns.length === 0) return;
      const lines = turns.map((t) => formatTurnDetail(runId, t.plan.client, t.plan.round, t.plan.expectedCachedTokens, t.rec, t.extra));
      const path = opts.requestDetails;
      guardedWrite("--request-details", path, () => appendFileSync(path, lines.join("\n") + "\n"));
    },
    ended: (rounds) => out(renderRoundTableFooter(rounds)),
  };
}
