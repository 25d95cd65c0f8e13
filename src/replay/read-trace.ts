/** Reads and checks a trace file named on the command line: a missing or unreadable file is exit 2 naming it. */
import { readFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import { parseTrace, skippedText, type Trace, type TraceOptions } from "../workload/trace.ts";

export function readTrace(path: string, opts: TraceOptions): Trace {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`${path}: cannot read the trace (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const trace = parseTrace(path, text, opts);
  const skipped = skippedText(trace.skipped);
  if (skipped !== null) log.warn(`--skip-invalid: ${skipped} line(s) of ${path} dropped`);
  return trace;
}
