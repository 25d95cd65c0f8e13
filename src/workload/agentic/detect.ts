/**
 * Which format a trace file is in (`--trace-format auto`): a WEKA record has `requests` (and `block_size`), a
 * Mooncake line has `timestamp` and `hash_ids`, a TraceLab runner CSV starts with a header naming `arrival_time`.
 * Anything else is refused naming the file and its first line, before anything is read further or sent.
 */
import { UsageError } from "../../errors.ts";

export const TRACE_FORMATS = ["weka", "mooncake", "tracelab"] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

/** The format of a file's text; `named` (from `--trace-format`) wins when given. */
export function detectTraceFormat(path: string, text: string, named: TraceFormat | "auto" = "auto"): TraceFormat {
  if (named !== "auto") return named;
  const first = text.search(/\S/);
  if (first < 0) throw new UsageError(`${path}: the trace is empty`);
  const lineNo = 1 + (text.slice(0, first).match(/\n/g)?.length ?? 0);
  const end = text.indexOf("\n", first);
  const firstLine = text.slice(first, end < 0 ? text.length : end).trim();
  if (firstLine.startsWith("{")) {
    const value = firstRecord(text.slice(first), firstLine);
    if (value !== null) {
      if ("requests" in value || "block_size" in value) return "weka";
      if ("timestamp" in value && "hash_ids" in value) return "mooncake";
    }
  } else {
    const header = firstLine.split(",").map((h) => h.trim());
    if (header.includes("arrival_time") && (header.includes("session_id") || header.includes("id"))) return "tracelab";
  }
  throw new UsageError(
    `${path}:${lineNo}: unknown trace format (not a WEKA record with "requests", a Mooncake line with "timestamp" and "hash_ids", or a TraceLab CSV header with "arrival_time"); name it with --trace-format ${TRACE_FORMATS.join("|")}`,
  );
}

/** The first record: the first line as JSON, else the whole text (a pretty-printed WEKA file). */
function firstRecord(rest: string, firstLine: string): Record<string, unknown> | null {
  for (const candidate of [firstLine, rest]) {
    try {
      const v: unknown = JSON.parse(candidate);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // Try the next reading.
    }
  }
  return null;
}
