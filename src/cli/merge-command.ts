/** `warmbench merge FILES... -o OUT`: one results file from uncoordinated runs, appended to OUT (one line per point). */
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { RawFlags } from "./options.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { appendJsonlLine, checkOutputWritable } from "../output/jsonl-file.ts";
import { mergeResults } from "../report/merge.ts";
import { readPointRuns } from "../report/point-runs.ts";
import { readResultsText } from "../report/runs.ts";

export function mergeCommand(raw: RawFlags & { _: string[] }): number {
  const files = raw._.filter((f) => f !== "");
  const out = typeof raw.output === "string" ? raw.output : undefined;
  if (files.length < 2) throw new UsageError("merge: expects two or more JSONL results files (warmbench merge A.jsonl B.jsonl -o M.jsonl)");
  if (out === undefined) throw new UsageError("merge: expects -o FILE, where the merged lines go");
  checkOutputWritable(out, "--output");
  const lines = mergeResults(files.map((name) => ({ name, runs: readPointRuns(readResultsText(name, "merge"), name).map((run) => run.lines) })));
  for (const line of lines) appendJsonlLine(out, formatJsonl(line));
  const what = lines[0] !== undefined && "type" in lines[0] ? "round" : "pct";
  log.info(`merged ${files.length} runs into ${lines.length} ${what} line(s) in ${out}`);
  return EXIT.ok;
}
