/**
 * Every file a command writes, written here: nothing in src/cli/ or a producer writes a file itself (test/unit/output/
 * no-direct-writes.test.ts holds them to it). A measuring command opens its ResultsWriter before anything else (before
 * the tokenizer loads, before any request): every path must be writable (a usage error naming the flag otherwise), and
 * the details and the prompt dump start empty, since lines are appended to them as the run goes. Then each results line
 * is appended whole and fsynced (--output-file), and so are the requests' details (a point's at once) and the prompts
 * (--dump-prompts, in the prompt worker's batches of up to 4 MiB, so one fsync per batch, not per line); a file written at the end in one piece (a report, a passport, an analysis) goes through writeArtifact. Every
 * write goes through guardedWrite: a failing output is named once and skipped from then on, every other output goes
 * on, and the command exits 9 (EXIT.outputFailed).
 */
import { truncateSync, writeFileSync } from "node:fs";
import type { RunOptions } from "../config/options.ts";
import type { PromptDump } from "../engine/sink.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { guardedWrite } from "../write-guard.ts";
import { appendJsonlLine, appendWhole, checkNotResultsFile, checkOutputWritable, checkResultsAppend, type AppendIo } from "./jsonl-file.ts";

export type OutputPaths = Pick<RunOptions, "outputFile" | "dumpPrompts" | "requestDetails">;

/** A command's appended files; each method does nothing when its flag was not given. */
export interface ResultsWriter extends PromptDump {
  /** One results line (a point, a round, a probe, a capacity verdict, a merged line), appended whole and fsynced. */
  line(record: unknown): void;
  /** Request-details lines (each a JSON object, without its newline), appended whole in one write, fsynced. */
  details(lines: readonly string[]): void;
}

/**
 * Checks and opens the outputs `paths` names (a usage error naming the flag before anything is sent) and returns
 * their writer. `io` replaces the system calls of its appends (a test's, failing part-way).
 */
export function openResultsWriter(paths: OutputPaths, io?: AppendIo): ResultsWriter {
  const { outputFile, requestDetails, dumpPrompts } = paths;
  if (outputFile) checkResultsAppend(outputFile, "--output-file");
  if (dumpPrompts) checkOutputWritable(dumpPrompts, "--dump-prompts");
  if (requestDetails) checkOutputWritable(requestDetails, "--request-details");
  if (dumpPrompts) checkNotResultsFile(dumpPrompts, "--dump-prompts", outputFile);
  if (requestDetails) checkNotResultsFile(requestDetails, "--request-details", outputFile);
  for (const path of [dumpPrompts, requestDetails]) if (path) writeFileSync(path, "");
  return {
    line(record) {
      if (outputFile) guardedWrite("--output-file", outputFile, () => appendJsonlLine(outputFile, formatJsonl(record), io));
    },
    details(lines) {
      if (requestDetails && lines.length > 0)
        guardedWrite("--request-details", requestDetails, () => appendWhole(requestDetails, lines.join("\n") + "\n", { fsync: true, io }));
    },
    prompts(lines) {
      if (dumpPrompts && lines.length > 0) guardedWrite("--dump-prompts", dumpPrompts, () => appendWhole(dumpPrompts, lines, { fsync: true, io }));
    },
  };
}

/**
 * Writes a whole file at once (a report's --html or --md, a passport, an analysis, a generated doc) for `flag`; false
 * (named once on stderr, exit 9 by the caller) when it failed, and then what was written of it is cut to nothing, so
 * no half report is ever taken for a whole one.
 */
export function writeArtifact(flag: string, path: string, text: string): boolean {
  return guardedWrite(flag, path, () => {
    try {
      writeFileSync(path, text);
    } catch (err) {
      try {
        truncateSync(path, 0);
      } catch {
        // Never created, or not a file: nothing to cut.
      }
      throw err;
    }
  });
}
