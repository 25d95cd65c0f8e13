/**
 * The one generic parser of bound flags: every declaration a command takes that is bound to an option field (its
 * `bind`, or the command's own in its override) fills that field - its text given, else the command's declared
 * default (neither: null), checked against declared choices, then the binding's value parser. A command's parser reads the fields
 * and checks only what relates several of them.
 */
import { UsageError } from "../../errors.ts";
import { str, type RawFlags } from "../flag-values.ts";
import { CLIENT_FLAGS } from "./index.ts";
import type { CommandName, FlagBinding, FlagDecl, FlagSpec } from "./types.ts";

type Env = Record<string, string | undefined>;

/** One bound flag's field value, as `spec` (a command's view of the declaration) has it. */
export function boundValue(spec: FlagSpec, bind: FlagBinding, raw: RawFlags, env: Env): unknown {
  if (bind.parse !== undefined) return bind.parse(raw, env);
  if (bind.value === undefined) return undefined;
  const text = str(raw, spec.name) ?? (spec.default === undefined || spec.default === null ? undefined : String(spec.default));
  // Neither given nor defaulted for this command: the field is null (an optional path, a limit not set).
  if (text === undefined) return null;
  if (spec.choices !== undefined && !spec.choices.includes(text)) {
    throw new UsageError(`--${spec.name}: "${text}" is not supported (choose from: ${spec.choices.join(", ")})`);
  }
  return bind.value(text, spec.name);
}

/** A command's view of a declaration and the binding it has there; null when the command does not take the flag. */
export function commandBinding(decl: FlagDecl, command: CommandName): { spec: FlagSpec; bind: FlagBinding | undefined } | null {
  const own = decl.commands[command];
  if (own === undefined) return null;
  const { commands: _, bind, ...spec } = decl;
  return own === true ? { spec, bind } : { spec: { ...spec, ...own }, bind: own.bind ?? bind };
}

/**
 * The fields whose flags shape `command`'s workload (their bindings say `shapesWorkload`), in declaration order:
 * every process of a sharded run must agree on them, so the shards' workload hash is made of exactly these.
 */
export function workloadFields(command: CommandName): string[] {
  return CLIENT_FLAGS.flatMap((decl) => {
    const bind = commandBinding(decl, command)?.bind;
    return bind?.shapesWorkload === true ? [bind.field] : [];
  });
}

/** Every field the flags `command` takes are bound to, parsed: field name -> value. */
export function parseBound(command: CommandName, raw: RawFlags, env: Env = process.env): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const decl of CLIENT_FLAGS) {
    const view = commandBinding(decl, command);
    if (view === null || view.bind === undefined || (view.bind.parse === undefined && view.bind.value === undefined)) continue;
    out[view.bind.field] = boundValue(view.spec, view.bind, raw, env);
  }
  return out;
}
