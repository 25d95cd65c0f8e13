/**
 * The client's flag declarations, and how one command sees a declaration (its override applied). The mock declares
 * its own flags in src/mock (it shares no code with the client); the cli layer puts both together.
 */
import { AGENTIC_FLAGS, type AgenticDecl } from "./agentic.ts";
import { CAPACITY_FLAGS, type CapacityDecl } from "./capacity.ts";
import { MEASURE_FLAGS, type MeasureDecl } from "./measure.ts";
import { REPLAY_FLAGS, type ReplayDecl } from "./replay.ts";
import { PASSPORT_FLAGS, type PassportDecl } from "./passport.ts";
import { RESULTS_FLAGS } from "./results.ts";
import { TELEMETRY_FLAGS, type TelemetryDecl } from "./telemetry.ts";
import type { CommandName, FlagDecl, FlagSpec } from "./types.ts";

/** Every flag of run, demo, multiturn, capacity, replay, passport, report, compare, merge and history, each declared once. */
export const CLIENT_FLAGS: readonly FlagDecl[] = [
  ...MEASURE_FLAGS,
  ...CAPACITY_FLAGS,
  ...REPLAY_FLAGS,
  ...AGENTIC_FLAGS,
  ...PASSPORT_FLAGS,
  ...RESULTS_FLAGS,
  ...TELEMETRY_FLAGS,
];

/** Every client declaration as written (the results files' commands bind no field), for the types of the options they fill. */
export type ClientDecl = MeasureDecl | CapacityDecl | ReplayDecl | AgenticDecl | PassportDecl | TelemetryDecl;

/** The flags `command` takes, in declaration order, as that command shows them. */
export function flagsFor(decls: readonly FlagDecl[], command: CommandName): FlagSpec[] {
  return decls.flatMap((decl) => {
    const own = decl.commands[command];
    if (own === undefined) return [];
    const { commands: _, fixed: _f, ...spec } = decl;
    return [own === true ? spec : { ...spec, ...own }];
  });
}

/** `(default: X)` as the help and the docs print it; empty without a default. */
export const defaultText = (f: FlagSpec): string => (f.default === undefined || f.default === null ? "" : String(f.default));
