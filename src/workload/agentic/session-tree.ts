/**
 * An agentic session as the readers give it, whatever the file's format: a tree of chains. The root chain is the
 * agent's own calls in order; a subagent is a chain of its own (its own context), spawned from its parent chain and
 * possibly nesting more. Times are the trace's seconds, as recorded; how they become a schedule (spawn, join and
 * delay rules) is the schedule's business (session-schedule.ts), not the reader's.
 */

/** One API call of a chain. */
export interface AgenticCall {
  kind: "call";
  /** 1-based line of the file the call's trace starts on (messages name it). */
  line: number;
  /** Where in the trace: `requests[3].requests[0]` (WEKA), `round 4` (TraceLab). */
  at: string;
  /** Recorded send time, trace seconds (WEKA: root time for root calls, as the file gives it for inner ones). */
  tS: number;
  inputLength: number;
  outputLength: number;
  /** One id per full block of the trace's block size (WEKA: floor(in / block_size)); the tail is drawn per request. */
  hashIds: readonly number[];
  /** Previous answer's end to this send, seconds; null where the file does not say. */
  thinkTimeS: number | null;
  /** Send to the end of the answer, seconds; null where the file does not say. */
  apiTimeS: number | null;
}

/** A subagent: its own chain, spawned from the chain it appears in. */
export interface AgenticSubagent {
  kind: "subagent";
  line: number;
  at: string;
  agentId: string;
  /** The wrapper's `t`, seconds (in traces built by the WEKA tools: when its result came back to the parent). */
  tS: number;
  /** Its recorded duration, ms; null when unknown (`async_launched`). */
  durationMs: number | null;
  steps: AgenticStep[];
}

export type AgenticStep = AgenticCall | AgenticSubagent;

export interface AgenticTrace {
  /** The file it was read from, and the 1-based line its record starts on. */
  path: string;
  line: number;
  id: string;
  /** Tokens per hash id. */
  blockSize: number;
  /** local: the trace's ids are its own (shared by its subagents); global: one id space for the whole corpus. */
  hashIdScope: "local" | "global";
  steps: AgenticStep[];
}
