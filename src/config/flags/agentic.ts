/**
 * The flags of `warmbench replay` for agentic traces (issue 38): the trace's format, the schedule's named rules
 * (delay, spawn, join: src/workload/agentic/session-plan.ts and session-schedule.ts say what each means), the
 * idle-gap cap, the lanes and where each lane's first session starts.
 */
import { UsageError } from "../../errors.ts";
import { parseIntFlag, parsePositive } from "../flag-values.ts";
import { bindField, chosen } from "./binding.ts";
import type { FlagDecl } from "./types.ts";

const FORMATS = ["auto", "weka", "mooncake", "tracelab"] as const;
const DELAYS = ["think-time", "start-to-start", "end-to-start"] as const;
const SPAWNS = ["result-minus-duration", "wrapper-start", "absolute"] as const;
const JOINS = ["first-after-end", "next-call", "none"] as const;

/** Defaults: AgentX's end-to-start delays and 10 s idle cap, the WEKA tools' spawn reading, AIPerf's join. */
const AGENTIC_DEFAULTS = {
  traceFormat: "auto",
  delay: "end-to-start",
  spawn: "result-minus-duration",
  join: "first-after-end",
  maxIdleS: 10,
} as const;

/** The most --max-idle takes: a cap past a day caps nothing a trace records. */
const MAX_IDLE_MOST_S = 86_400;
/** The most --sessions takes: a million session trees in flight from one client. */
const SESSIONS_MOST = 1_000_000;

/** `--max-idle`: seconds > 0 (a day at most), or `none` (no cap). */
function parseMaxIdle(text: string, flag: string): number | null {
  if (text.trim() === "none") return null;
  const s = parsePositive(flag, text, "a number of seconds or none", false);
  if (s > MAX_IDLE_MOST_S) throw new UsageError(`--${flag} ${s}: above the most warmbench takes, ${MAX_IDLE_MOST_S} (a day; none: no cap)`);
  return s;
}

/** `--start-at 0.5` (a fraction of each lane's first trace) or `0.25:0.75` (drawn per lane from --seed). */
function parseStartAt(text: string, flag: string): { from: number; to: number } {
  const parts = text.trim().split(":");
  const frac = (p: string): number => {
    const v = p.trim() === "" ? Number.NaN : Number(p);
    if (!(v >= 0 && v < 1)) throw new UsageError(`--${flag} ${text}: expected a fraction in [0, 1) or a range FROM:TO, got "${p}"`);
    return v;
  };
  if (parts.length === 1) return { from: frac(parts[0]!), to: frac(parts[0]!) };
  if (parts.length !== 2) throw new UsageError(`--${flag} ${text}: expected a fraction (0.5) or a range FROM:TO (0.25:0.75)`);
  const range = { from: frac(parts[0]!), to: frac(parts[1]!) };
  if (range.to < range.from) throw new UsageError(`--${flag} ${text}: the range's upper end is below its lower end`);
  return range;
}

const replay = { replay: true } as const;
const d = AGENTIC_DEFAULTS;

const DECLS = [
  {
    name: "trace-format",
    type: "string" as const,
    help: "The trace's format: weka (agentic sessions with subagents), mooncake (independent rows), tracelab (runner CSV); auto: from the file",
    commands: replay,
    default: d.traceFormat,
    choices: FORMATS,
    bind: bindField("traceFormat", chosen(FORMATS), true),
  },
  {
    name: "delay-rule",
    type: "string" as const,
    help: "Agentic: what a turn waits after the previous answer: the trace's think_time, the recorded start-to-start gap, or the recorded end-to-start gap",
    commands: replay,
    default: d.delay,
    choices: DELAYS,
    bind: bindField("delay", chosen(DELAYS), true),
  },
  {
    name: "spawn-rule",
    type: "string" as const,
    help: "Agentic: when a subagent started: its wrapper's t minus duration_ms (the WEKA tools), its wrapper's t, or its first call's t read as root time",
    commands: replay,
    default: d.spawn,
    choices: SPAWNS,
    bind: bindField("spawn", chosen(SPAWNS), true),
  },
  {
    name: "join-rule",
    type: "string" as const,
    help: "Agentic: which parent turn waits for a subagent: the first sent at or after its recorded end, the next after it, or none (background)",
    commands: replay,
    default: d.join,
    choices: JOINS,
    bind: bindField("join", chosen(JOINS), true),
  },
  {
    name: "max-idle",
    type: "string" as const,
    help: "Agentic: cap on every recorded gap, trace seconds (before --time-scale); none: no cap",
    commands: replay,
    default: d.maxIdleS,
    bind: bindField("maxIdleS", parseMaxIdle, true),
  },
  {
    name: "sessions",
    type: "string" as const,
    help: "Agentic: session trees in flight at once (lanes); each lane takes the next trace when its tree drains (unset: one lane per trace of the corpus)",
    commands: replay,
    bind: bindField("sessions", (t, f) => parseIntFlag(f, t, 1, SESSIONS_MOST), true),
  },
  {
    name: "start-at",
    type: "string" as const,
    help: "Agentic: start each lane's first session at this fraction of it (or FROM:TO, drawn per lane from --seed), the history before it sent first as warm-up, off the clock",
    commands: replay,
    bind: bindField("startAt", parseStartAt, true),
  },
] as const;

export const AGENTIC_FLAGS: readonly FlagDecl[] = DECLS;

/** The declarations as written (their binding and default types): what replay's options are typed from. */
export type AgenticDecl = (typeof DECLS)[number];
