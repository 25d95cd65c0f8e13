/**
 * An agentic replay's requests, as its --request-details file holds them (run-agentic.ts writes each measured
 * request's record with its trace, session, chain and turn): the file the run's header names (as given, else beside
 * the results file, as merge finds it), each line checked for the fields the report's pictures read. A line that
 * lacks one is left out and counted, never guessed at.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { ReportRun } from "./runs.ts";

export interface AgenticRequest {
  requestId: string;
  ok: boolean;
  /** The replay instance of a trace: one session tree (its root and its subagents). */
  session: number;
  traceId: string;
  /** "" for the root agent, else the subagent's path (agent_001, agent_001/agent_002, ...). */
  agentPath: string;
  turn: number;
  startEpochMs: number;
  latencyMs: number;
  /** Null where the request failed before its first token. */
  ttftMs: number | null;
  promptLen: number;
  /** Negative: the server reported none. */
  cachedTokens: number;
  /** What an infinite cache would have held of the prompt; null where the details predate it. */
  ceilingTokens: number | null;
}

export interface AgenticDetails {
  file: string;
  requests: AgenticRequest[];
  /** Lines of the run that lacked a field the pictures need. */
  invalid: number;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** One details line as an agentic request, or null when it is not one. */
function agenticRequestOf(d: Record<string, unknown>): AgenticRequest | null {
  if (typeof d.request_id !== "string" || typeof d.ok !== "boolean" || typeof d.trace_id !== "string" || typeof d.agent_path !== "string") return null;
  if (!isInt(d.session) || d.session < 0 || !isInt(d.turn) || !isInt(d.prompt_len) || d.prompt_len < 0) return null;
  if (!isNum(d.start_epoch_ms) || !isNum(d.latency_ms) || d.latency_ms < 0 || !isNum(d.cached_tokens)) return null;
  return {
    requestId: d.request_id,
    ok: d.ok,
    session: d.session,
    traceId: d.trace_id,
    agentPath: d.agent_path,
    turn: d.turn,
    startEpochMs: d.start_epoch_ms,
    latencyMs: d.latency_ms,
    ttftMs: isNum(d.ttft_ms) && d.ttft_ms >= 0 ? d.ttft_ms : null,
    promptLen: d.prompt_len,
    cachedTokens: d.cached_tokens,
    ceilingTokens: isNum(d.expected_cached_tokens_ceiling) ? d.expected_cached_tokens_ceiling : null,
  };
}

/** The requests of a details file's text that belong to `runId` (their ids start with it). */
export function parseAgenticDetails(text: string, runId: string | null): { requests: AgenticRequest[]; invalid: number } {
  const requests: AgenticRequest[] = [];
  let invalid = 0;
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    let d: unknown;
    try {
      d = JSON.parse(raw);
    } catch {
      invalid++;
      continue;
    }
    if (d === null || typeof d !== "object" || Array.isArray(d)) {
      invalid++;
      continue;
    }
    const id = (d as { request_id?: unknown }).request_id;
    if (runId !== null && typeof id === "string" && !id.startsWith(`${runId}-`)) continue;
    const r = agenticRequestOf(d as Record<string, unknown>);
    if (r === null) invalid++;
    else requests.push(r);
  }
  return { requests, invalid };
}

/** The run's details, or null when it wrote none or the file is gone. */
export function readAgenticDetails(run: Pick<ReportRun, "file" | "header" | "runId">): AgenticDetails | null {
  const given = (run.header as { options?: Record<string, unknown> } | undefined)?.options?.request_details;
  if (typeof given !== "string" || given === "") return null;
  for (const path of [given, join(dirname(run.file), basename(given))]) {
    if (!existsSync(path)) continue;
    return { file: path, ...parseAgenticDetails(readFileSync(path, "utf8"), run.runId) };
  }
  return null;
}
