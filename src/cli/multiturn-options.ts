/**
 * Parsing of `warmbench multiturn` flags: the sweep's shared flags (options.ts), then the conversation's shape.
 * Every problem is one UsageError naming the flag (exit 2), before anything is sent.
 */
import { parsePassportFlag } from "./passport-file.ts";
import { checkMemory, idBytes } from "../config/bounds.ts";
import { promptLenOf } from "../multiturn/plan.ts";
import { IN_FLIGHT_BYTES_PER_TOKEN, parseFidelity, parseReplicas } from "./options.ts";
import { checkGatesMeasurable } from "../gates/plan.ts";
import { UsageError } from "../errors.ts";
import { oneOf, parseIntFlag, parseNumberFlag, str, type RawFlags } from "../config/flag-values.ts";
import { parseServerTarget, parsePlacementFlags, parsePlannedGates, parseSharedTail } from "./options.ts";
import { plannedRoundAxes } from "../schema/axes.ts";
import { BACKENDS, MULTITURN_DEFAULTS, READY_QUEUE_POLICIES, RUN_DEFAULTS, type MultiturnOptions, type ThinkTime } from "../config/options.ts";

const positive = (raw: RawFlags, flag: string, dflt: number, why: string): number => {
  const n = parseIntFlag(flag, str(raw, flag) ?? String(dflt), Number.MIN_SAFE_INTEGER);
  if (n < 1) throw new UsageError(`--${flag} ${n}: ${why}`);
  return n;
};

/** `--think-time 0.5` (fixed), `exp:0.5` (exponential, mean 0.5 s) or `uniform:0.2:0.8` (seconds). */
export function parseThinkTime(value: string): ThinkTime {
  const text = value.trim();
  const parts = text.split(":");
  const secs = (v: string | undefined): number => parseNumberFlag("think-time", v ?? "", 0);
  if (parts.length === 1) return { kind: "fixed", s: secs(parts[0]) };
  if (parts[0] === "exp" && parts.length === 2) return { kind: "exp", meanS: secs(parts[1]) };
  if (parts[0] === "uniform" && parts.length === 3) {
    const lowS = secs(parts[1]);
    const highS = secs(parts[2]);
    if (highS < lowS) throw new UsageError(`--think-time ${text}: the upper bound is below the lower one`);
    return { kind: "uniform", lowS, highS };
  }
  throw new UsageError(`--think-time "${value}": expected seconds (0.5), exp:MEAN or uniform:LOW:HIGH`);
}

export function parseMultiturnOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): MultiturnOptions {
  const d = RUN_DEFAULTS;
  const m = MULTITURN_DEFAULTS;
  const backend = oneOf(raw, "backend", BACKENDS, d.backend);
  const target = parseServerTarget(raw, "", true);
  const numClients = positive(raw, "num-clients", m.numClients, "a conversation needs at least one client");
  const numRounds = positive(raw, "num-rounds", m.numRounds, "each client needs at least one round (turn) to be measured");
  const turnTokens = positive(raw, "turn-tokens", m.turnTokens, "every user turn adds at least one new token");
  const firstRaw = str(raw, "first-turn-tokens");
  const firstTurnTokens = firstRaw === undefined ? turnTokens : positive(raw, "first-turn-tokens", turnTokens, "the first turn needs at least one token");
  const sharedSystemTokens = parseIntFlag("shared-system-tokens", str(raw, "shared-system-tokens") ?? String(m.sharedSystemTokens), 0);
  const outputLen = positive(raw, "output-len", m.outputLen, "without an output token there is no time to first token to measure (use 1 or more)");
  const maxConcurrency = parseIntFlag("max-concurrency", str(raw, "max-concurrency") ?? String(m.maxConcurrency), Number.MIN_SAFE_INTEGER, 65535);
  if (maxConcurrency < 0) {
    throw new UsageError(`--max-concurrency ${maxConcurrency}: a concurrency limit cannot be negative (0 means every client at once)`);
  }
  const workingSet = parseIntFlag("working-set", str(raw, "working-set") ?? String(m.workingSet), Number.MIN_SAFE_INTEGER);
  if (workingSet < 1) {
    throw new UsageError(`--working-set ${workingSet}: a working set holds at least one system prompt (1 = every client shares the same one)`);
  }
  if (workingSet > 1 && sharedSystemTokens === 0) {
    throw new UsageError(`--working-set ${workingSet}: the working set rotates system prompts, so it needs --shared-system-tokens > 0`);
  }
  // Every gate judges every round line: one whose scope or metric matches none of them is refused now.
  const planned = parsePlannedGates(raw, plannedRoundAxes(numRounds));
  const fidelity = parseFidelity(raw, "auto");
  const replicas = parseReplicas(raw, parsePlacementFlags(raw));
  checkGatesMeasurable(planned, { "check-fidelity": fidelity.fidelity !== undefined, replicas: replicas.replicas !== undefined });
  // The check runs once, after the last round: a fidelity gate without a round of its own judges that round's line.
  const gates = planned.map((g) =>
    g.metric.startsWith("fidelity_") && !g.scope.some((c) => c.axis === "round")
      ? { ...g, scope: [...g.scope, { axis: "round" as const, op: "==" as const, value: numRounds - 1 }] }
      : g,
  );
  // Every conversation keeps its history's ids to its last turn; the turns in flight hold their bodies too.
  const lastPrompt = promptLenOf({ sharedSystemTokens, firstTurnTokens, turnTokens, outputLen, numRounds }, numRounds - 1);
  const inFlight = maxConcurrency === 0 ? numClients : Math.min(maxConcurrency, numClients);
  checkMemory(
    idBytes(numClients * lastPrompt) + inFlight * lastPrompt * IN_FLIGHT_BYTES_PER_TOKEN,
    `--num-clients ${numClients} conversations of ${numRounds} rounds (the last turn's prompt ${lastPrompt} tokens)`,
  );
  return {
    backend,
    // Conversations continue from the server's own ids: the engine's native generation API (token ids in and out).
    endpoint: "auto",
    ...target,
    outputLen,
    maxConcurrency,
    ...parseSharedTail(raw, env),
    numClients,
    numRounds,
    turnTokens,
    firstTurnTokens,
    sharedSystemTokens,
    roundBarrier: raw["round-barrier"] === true,
    thinkTime: parseThinkTime(str(raw, "think-time") ?? m.thinkTime),
    readyQueuePolicy: oneOf(raw, "ready-queue-policy", READY_QUEUE_POLICIES, m.readyQueuePolicy),
    workingSet,
    gates,
    ...fidelity,
    ...parsePlacementFlags(raw),
    ...replicas,
    ...parsePassportFlag(raw),
  };
}
