/**
 * The WEKA agentic trace format (callanjfox/agentic-coding-analysis, kv-cache-tester; SemiAnalysis publishes it as
 * `cc-traces-weka-*`): one session per record, `{id, block_size, hash_id_scope, requests: [...]}`, where a request is
 * an API call (`type` `n` or `s`: `t` s, `in`, `out`, `hash_ids`, `think_time` s, `api_time` s) or a
 * `type: "subagent"` wrapper nesting its own `requests` (`t` s, `agent_id`, `duration_ms`). A file is one record
 * (kv-cache-tester's `trace_NNNN.json`, possibly pretty-printed) or one record per line (`traces.jsonl`).
 * Everything is checked before anything is sent: a bad record is one UsageError naming the file, the line its record
 * starts on and where in it (exit 2).
 */
import { UsageError } from "../../errors.ts";
import type { AgenticCall, AgenticStep, AgenticSubagent, AgenticTrace } from "./session-tree.ts";

/** Why a record is refused, with where in it. */
class BadRecord extends Error {}

type Obj = Record<string, unknown>;

const MAX_HASH_ID = 2 ** 32;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const isCount = (v: unknown, min: number): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= min;
const shown = (v: unknown): string => (v === undefined ? "nothing (missing)" : JSON.stringify(v));

function seconds(o: Obj, key: string, at: string, optional: boolean): number | null {
  const v = o[key];
  if ((v === undefined || v === null) && optional) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new BadRecord(`${at}: "${key}" must be a number of seconds, got ${shown(v)}`);
  // A negative time or delay has no schedule: the turn would be sent before the answer it follows.
  if (v < 0) throw new BadRecord(`${at}: "${key}" is negative (${v} s): a delay or a trace time is >= 0`);
  return v;
}

function readCall(o: Obj, at: string, line: number, blockSize: number): AgenticCall {
  const tS = seconds(o, "t", at, false)!;
  if (!isCount(o.in, 1)) throw new BadRecord(`${at}: "in" must be an integer >= 1, got ${shown(o.in)}`);
  if (!isCount(o.out, 0)) throw new BadRecord(`${at}: "out" must be an integer >= 0, got ${shown(o.out)}`);
  const ids = o.hash_ids;
  // Below 2^32: the prompt chain folds the trace's namespace into the id (prompt-chain.ts).
  if (!Array.isArray(ids) || !ids.every((id) => isCount(id, 0) && id < MAX_HASH_ID)) {
    throw new BadRecord(`${at}: "hash_ids" must be an array of integers in [0, 2^32), got ${shown(ids).slice(0, 80)}`);
  }
  // Full blocks only (the WEKA builder's floor), or with a trailing partial block (no-subagents-051226's ceil).
  const full = Math.floor(o.in / blockSize);
  const withTail = Math.ceil(o.in / blockSize);
  if (ids.length !== full && ids.length !== withTail) {
    throw new BadRecord(
      `${at}: "in" ${o.in} needs floor(${o.in}/${blockSize}) = ${full} hash ids (or ${withTail} with a partial last block), the request has ${ids.length}`,
    );
  }
  return {
    kind: "call",
    line,
    at,
    tS,
    inputLength: o.in,
    outputLength: o.out,
    hashIds: ids as number[],
    thinkTimeS: seconds(o, "think_time", at, true),
    apiTimeS: seconds(o, "api_time", at, true),
  };
}

function readSteps(list: unknown, at: string, line: number, blockSize: number): AgenticStep[] {
  if (!Array.isArray(list)) throw new BadRecord(`${at}: "requests" must be an array, got ${shown(list)}`);
  const steps: AgenticStep[] = [];
  let lastCallS = 0;
  list.forEach((raw, i) => {
    const here = `${at}[${i}]`;
    if (!isObj(raw)) throw new BadRecord(`${here}: expected an object, got ${shown(raw)}`);
    if (raw.type === "subagent") {
      steps.push(readSubagent(raw, here, line, blockSize));
      return;
    }
    if (raw.type !== "n" && raw.type !== "s") throw new BadRecord(`${here}: "type" must be "n", "s" or "subagent", got ${shown(raw.type)}`);
    const call = readCall(raw, here, line, blockSize);
    if (call.tS < lastCallS)
      throw new BadRecord(`${here}: "t" ${call.tS} s is before the previous call's ${lastCallS} s (a negative delay; calls are in time order)`);
    lastCallS = call.tS;
    steps.push(call);
  });
  return steps;
}

function readSubagent(o: Obj, at: string, line: number, blockSize: number): AgenticSubagent {
  const tS = seconds(o, "t", at, false)!;
  const d = o.duration_ms;
  if (d !== undefined && d !== null && !(typeof d === "number" && Number.isFinite(d) && d >= 0)) {
    throw new BadRecord(`${at}: "duration_ms" must be a number of ms >= 0 or null, got ${shown(d)}`);
  }
  const steps = readSteps(o.requests, `${at}.requests`, line, blockSize);
  // A subagent with nothing to send has no start, no end and nothing to join on.
  if (!steps.some(hasCall)) throw new BadRecord(`${at}: a subagent with no requests`);
  const agentId = typeof o.agent_id === "string" && o.agent_id !== "" ? o.agent_id : at;
  return { kind: "subagent", line, at, agentId, tS, durationMs: typeof d === "number" ? d : null, steps };
}

const hasCall = (s: AgenticStep): boolean => s.kind === "call" || s.steps.some(hasCall);

function readRecord(value: unknown, path: string, line: number): AgenticTrace {
  if (!isObj(value)) throw new BadRecord(`expected a trace object, got ${shown(value)}`);
  if (typeof value.id !== "string" || value.id === "") throw new BadRecord(`"id" must be a non-empty string, got ${shown(value.id)}`);
  if (!isCount(value.block_size, 1)) throw new BadRecord(`"block_size" must be an integer >= 1 (tokens per hash id), got ${shown(value.block_size)}`);
  const scope = value.hash_id_scope ?? "local";
  if (scope !== "local" && scope !== "global") throw new BadRecord(`"hash_id_scope" must be "local" or "global", got ${shown(scope)}`);
  const steps = readSteps(value.requests, "requests", line, value.block_size);
  if (!steps.some(hasCall)) throw new BadRecord(`"requests": the trace has no request`);
  return { path, line, id: value.id, blockSize: value.block_size, hashIdScope: scope, steps };
}

/** Parses and checks the whole text of a WEKA file: one record (possibly spread over lines), or one per line. */
export function parseWekaTraces(path: string, text: string): AgenticTrace[] {
  const first = text.search(/\S/);
  if (first < 0) throw new UsageError(`${path}: no trace in the file`);
  const startLine = 1 + (text.slice(0, first).match(/\n/g)?.length ?? 0);
  const guard = (line: number, read: () => AgenticTrace): AgenticTrace => {
    try {
      return read();
    } catch (err) {
      if (err instanceof BadRecord) throw new UsageError(`${path}:${line}: ${err.message}`);
      throw err;
    }
  };
  let whole: unknown;
  let isWhole = false;
  try {
    whole = JSON.parse(text);
    isWhole = true;
  } catch {
    // Not one JSON value: a record per line.
  }
  if (isWhole) return [guard(startLine, () => readRecord(whole, path, startLine))];
  const traces: AgenticTrace[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    const line = i + 1;
    traces.push(
      guard(line, () => {
        let value: unknown;
        try {
          value = JSON.parse(raw);
        } catch (err) {
          throw new BadRecord(`not JSON (${(err as Error).message})`);
        }
        return readRecord(value, path, line);
      }),
    );
  });
  return traces;
}
