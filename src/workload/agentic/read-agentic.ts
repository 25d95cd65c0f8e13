/**
 * Reads a trace file named on the command line and gives its sessions, whatever the agentic format: the format is
 * detected from the content or named (`--trace-format`). A Mooncake file is not read here: its rows are the replay's
 * own reader's (src/replay/read-trace.ts), so the caller is told to use it. A directory is a corpus: every file in
 * it (kv-cache-tester's trace_NNNN.json), in name order, each read as its own trace file, all of one agentic format.
 * A missing or unreadable file is exit 2 naming it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../errors.ts";
import { type TraceFormat, detectTraceFormat } from "./detect.ts";
import type { AgenticTrace } from "./session-tree.ts";
import { parseTraceLabCsv } from "./tracelab-trace.ts";
import { parseWekaTraces } from "./weka-trace.ts";

type ReadAgentic = { format: "mooncake" } | { format: Exclude<TraceFormat, "mooncake">; traces: AgenticTrace[] };

/** `blockSize`: the invented blocks' size for TraceLab (WEKA records carry their own). */
export function readAgenticTraces(path: string, o: { format: TraceFormat | "auto"; blockSize: number }): ReadAgentic {
  if (isDirectory(path)) return readCorpus(path, o);
  return readFile(path, o);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Every trace file of a directory (hidden files and the licence or notes beside them are not traces). */
function readCorpus(dir: string, o: { format: TraceFormat | "auto"; blockSize: number }): ReadAgentic {
  const files = readdirSync(dir)
    .filter((f) => /\.(json|jsonl|csv)$/.test(f) && !f.startsWith("."))
    .sort();
  if (files.length === 0) throw new UsageError(`${dir}: a directory with no trace file (*.json, *.jsonl, *.csv)`);
  const traces: AgenticTrace[] = [];
  let format: Exclude<TraceFormat, "mooncake"> | null = null;
  for (const f of files) {
    const path = join(dir, f);
    const read = readFile(path, o);
    if (read.format === "mooncake") throw new UsageError(`${path}:1: a Mooncake trace in a corpus directory: replay it as its own file`);
    if (format !== null && read.format !== format) throw new UsageError(`${path}:1: a ${read.format} trace among ${format} ones: a corpus is of one format`);
    format = read.format;
    traces.push(...read.traces);
  }
  return { format: format!, traces };
}

function readFile(path: string, o: { format: TraceFormat | "auto"; blockSize: number }): ReadAgentic {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`${path}: cannot read the trace (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const format = detectTraceFormat(path, text, o.format);
  if (format === "mooncake") return { format };
  if (format === "weka") return { format, traces: parseWekaTraces(path, text) };
  return { format, traces: parseTraceLabCsv(path, text, o.blockSize) };
}
