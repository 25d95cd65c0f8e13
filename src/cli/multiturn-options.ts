/**
 * Parsing of `warmbench multiturn` flags: the sweep's shared flags (options.ts), then the conversation's shape.
 * Every problem is one UsageError naming the flag (exit 2), before anything is sent.
 */
import { parsePassportFlag } from "./passport-file.ts";
import { checkMemory } from "../config/bounds.ts";
import { multiturnMemoryBytes } from "../config/memory-model.ts";
import { promptLenOf } from "../multiturn/plan.ts";
import { parseFidelity, parseReplicas } from "./options.ts";
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
  const { numClients, numRounds, turnTokens, sharedSystemTokens, outputLen, workingSet } = bound;
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
  // The memory model (config/memory-model.ts): every conversation, every turn and every turn's prompt tokens.
  const shape = { sharedSystemTokens, firstTurnTokens, turnTokens, outputLen, numRounds };
  let promptTokens = 0;
  for (let round = 0; round < numRounds; round++) promptTokens += promptLenOf(shape, round);
  const placement = parsePlacementFlags(raw);
  const workers = typeof placement.workers === "number" ? placement.workers : 1;
  checkMemory(
    multiturnMemoryBytes({
      conversations: numClients,
      turns: numClients * numRounds,
      historyTokens: numClients * promptLenOf(shape, numRounds - 1),
      turnPromptTokens: numClients * promptTokens,
      workers,
    }),
    `--num-clients ${numClients} conversations of ${numRounds} rounds (${promptTokens} prompt tokens each over its turns)${workers > 1 ? ` in ${workers} processes` : ""}`,
  );
  return {
    ...bound,
    ...target,
    firstTurnTokens,
    gates,
    ...fidelity,
    ...placement,
    ...replicas,
    ...parsePassportFlag(raw),
  };
}
