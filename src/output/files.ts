/**
 * A measuring command's output files, opened before anything else (before the tokenizer loads, before any request):
 * every path must be writable (a usage error naming the flag otherwise), and the details and prompt dumps start
 * empty, since lines are appended to them as the run goes.
 */
import { writeFileSync } from "node:fs";
import type { RunOptions } from "../config/options.ts";
import { checkOutputWritable, checkResultsAppend } from "./jsonl-file.ts";

export type OutputPaths = Pick<RunOptions, "outputFile" | "dumpPrompts" | "requestDetails">;

export function openOutputs(opts: OutputPaths): void {
  if (opts.outputFile) checkResultsAppend(opts.outputFile, "--output-file");
  for (const [path, flag] of [
    [opts.dumpPrompts, "--dump-prompts"],
    [opts.requestDetails, "--request-details"],
  ] as const) {
    if (path) checkOutputWritable(path, flag);
  }
  for (const path of [opts.dumpPrompts, opts.requestDetails]) if (path) writeFileSync(path, "");
}
