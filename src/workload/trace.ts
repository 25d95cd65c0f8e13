/**
 * A Mooncake-format trace (the FAST'25 release and its successors): one JSON object per line,
 * `{"timestamp": ms since the first request, "input_length": N, "output_length": M, "hash_ids": [...]}`, where
 * hash id j names the prompt's j-th block of `blockSize` tokens and equal leading ids mean a shared prefix.
 * Every line is checked before anything is sent: a bad one is one UsageError naming the file and line (exit 2), or
 * with --skip-invalid it is dropped and counted.
 */
import { UsageError } from "../errors.ts";

/** One request of the trace, as the trace means it. */
export interface TraceRequest {
  /** 1-based line in the trace file (messages name it). */
  line: number;
  /** Position in the replayed slice (0-based): its request id and the order a closed loop sends in. */
  index: number;
  timestampMs: number;
  inputLength: number;
  outputLength: number;
  hashIds: readonly number[];
}

export interface TraceOptions {
  blockSize: number;
  skipInvalid: boolean;
  /** Trace seconds: replay the requests with startS <= timestamp < startS + durationS. */
  startS: number;
  durationS: number | null;
  /** At most this many requests of the slice. */
  limit: number | null;
}

export interface Trace {
  path: string;
  blockSize: number;
  /** The slice to replay, in trace order. */
  requests: TraceRequest[];
  /** Valid lines of the whole file (before slicing). */
  validLines: number;
  /** Lines dropped by --skip-invalid, by reason. */
  skipped: Record<string, number>;
}

/** Why a line is refused: a short reason (the counting key) and the detail shown. */
class BadLine extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
  }
}

const isCount = (v: unknown, min: number): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= min;

/** Checks one parsed line; returns its request or throws a BadLine. */
function checkLine(value: unknown, blockSize: number, lastMs: number): Omit<TraceRequest, "line" | "index"> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new BadLine("malformed", "expected a JSON object");
  const o = value as Record<string, unknown>;
  const ts = o.timestamp;
  if (typeof ts !== "number" || !Number.isFinite(ts) || ts < 0)
    throw new BadLine("malformed", `"timestamp" must be a number of ms >= 0, got ${JSON.stringify(ts)}`);
  if (!isCount(o.input_length, 1)) throw new BadLine("malformed", `"input_length" must be an integer >= 1, got ${JSON.stringify(o.input_length)}`);
  // Without an output token there is no first token: neither TTFT nor the end of the prefill can be observed.
  if (!isCount(o.output_length, 1)) throw new BadLine("malformed", `"output_length" must be an integer >= 1, got ${JSON.stringify(o.output_length)}`);
  const ids = o.hash_ids;
  if (!Array.isArray(ids) || !ids.every((id) => isCount(id, 0))) throw new BadLine("malformed", `"hash_ids" must be an array of integers >= 0`);
  const blocks = Math.ceil(o.input_length / blockSize);
  if (ids.length !== blocks) {
    throw new BadLine(
      "hash_ids_length",
      `input_length ${o.input_length} needs ceil(${o.input_length}/${blockSize}) = ${blocks} hash ids at --block-size ${blockSize}, the line has ${ids.length}`,
    );
  }
  if (ts < lastMs) throw new BadLine("decreasing_timestamp", `timestamp ${ts} ms is before the previous request's ${lastMs} ms (a trace is in time order)`);
  return { timestampMs: ts, inputLength: o.input_length, outputLength: o.output_length, hashIds: ids as number[] };
}

/** Parses and checks the whole text of a trace file, then cuts the slice to replay. */
export function parseTrace(path: string, text: string, opts: TraceOptions): Trace {
  const all: TraceRequest[] = [];
  const skipped: Record<string, number> = {};
  let lastMs = 0;
  let lineNo = 0;
  for (const raw of text.split("\n")) {
    lineNo++;
    const line = raw.trim();
    if (line === "") continue;
    try {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        throw new BadLine("malformed", `not JSON (${(err as Error).message})`);
      }
      const req = checkLine(value, opts.blockSize, lastMs);
      lastMs = req.timestampMs;
      all.push({ ...req, line: lineNo, index: 0 });
    } catch (err) {
      if (!(err instanceof BadLine)) throw err;
      if (!opts.skipInvalid) throw new UsageError(`${path}:${lineNo}: ${err.message} (--skip-invalid drops such lines)`);
      skipped[err.reason] = (skipped[err.reason] ?? 0) + 1;
    }
  }
  if (all.length === 0) throw new UsageError(`${path}: no valid request in the trace`);
  const requests = sliceTrace(all, opts);
  if (requests.length === 0)
    throw new UsageError(`${path}: --start ${opts.startS}${opts.durationS === null ? "" : ` --duration ${opts.durationS}`} selects no request`);
  return { path, blockSize: opts.blockSize, requests, validLines: all.length, skipped };
}

function sliceTrace(all: TraceRequest[], opts: Pick<TraceOptions, "startS" | "durationS" | "limit">): TraceRequest[] {
  const fromMs = opts.startS * 1000;
  const toMs = opts.durationS === null ? Infinity : fromMs + opts.durationS * 1000;
  const picked = all.filter((r) => r.timestampMs >= fromMs && r.timestampMs < toMs);
  const cut = opts.limit === null ? picked : picked.slice(0, opts.limit);
  return cut.map((r, index) => ({ ...r, index }));
}

/**
 * Requests longer than the model's context (prompt + output > `contextTokens`, known from the server): a UsageError
 * naming the first, or with --skip-invalid the trace without them (counted). Checked before anything is sent.
 */
export function checkContext(trace: Trace, contextTokens: number | null, skipInvalid: boolean): Trace {
  if (contextTokens === null) return trace;
  const tooLong = (r: TraceRequest) => r.inputLength + r.outputLength > contextTokens;
  const first = trace.requests.find(tooLong);
  if (first === undefined) return trace;
  if (!skipInvalid) {
    throw new UsageError(
      `${trace.path}:${first.line}: input_length ${first.inputLength} + output_length ${first.outputLength} exceeds the model's context of ${contextTokens} tokens (--skip-invalid drops such lines)`,
    );
  }
  const kept = trace.requests.filter((r) => !tooLong(r)).map((r, index) => ({ ...r, index }));
  if (kept.length === 0) throw new UsageError(`${trace.path}: every request exceeds the model's context of ${contextTokens} tokens`);
  const skipped = { ...trace.skipped, too_long: (trace.skipped.too_long ?? 0) + trace.requests.length - kept.length };
  return { ...trace, requests: kept, skipped };
}

/** Lines dropped by --skip-invalid, for one log line: "3 (2 malformed, 1 hash_ids_length)"; null when none. */
export function skippedText(skipped: Record<string, number>): string | null {
  const entries = Object.entries(skipped);
  if (entries.length === 0) return null;
  const total = entries.reduce((a, [, n]) => a + n, 0);
  return `${total} (${entries.map(([why, n]) => `${n} ${why}`).join(", ")})`;
}
