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
import { parseIntAtLeast, str, type RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { measuredOnlyWithOf } from "../schema/key-table.ts";
import { parseServerTarget, parsePlacementFlags, parsePlannedGates } from "./options.ts";
import { plannedRoundAxes } from "../schema/axes.ts";
import type { MultiturnOptions } from "../config/options.ts";

export function parseMultiturnOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): MultiturnOptions {
  // Every field of multiturn's flags, parsed from its declaration (config/flags/bound.ts) and typed by it; what follows
  // relates several.
  const bound = parseBound("multiturn", raw, env);
  const { numClients, numRounds, turnTokens, sharedSystemTokens, outputLen, maxConcurrency, workingSet } = bound;
  const target = parseServerTarget(raw, "", true);
  const firstRaw = str(raw, "first-turn-tokens");
  const firstTurnTokens = firstRaw === undefined ? turnTokens : parseIntAtLeast("first-turn-tokens", firstRaw, 1, "the first turn needs at least one token");
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
    measuredOnlyWithOf(g.metric) === "check-fidelity" && !g.scope.some((c) => c.axis === "round")
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
    ...bound,
    ...target,
    firstTurnTokens,
    gates,
    ...fidelity,
    ...parsePlacementFlags(raw),
    ...replicas,
    ...parsePassportFlag(raw),
  };
}
