/**
 * The one generic parser of bound flags: every declaration a command takes that is bound to an option field (its
 * `bind`, or the command's own in its override) fills that field - its text given, else the command's declared
 * default (neither: null), checked against declared choices, then the binding's value parser - and so does every
 * declaration that fixes its field for a command that takes no such flag (`fixed`). What it returns is typed from the
 * declarations as written (BoundOptions): a command's parser spreads it into the command's options, the compiler
 * holding the two to each other, and checks only what relates several fields.
 */
import { UsageError } from "../../errors.ts";
import { str, type RawFlags } from "../flag-values.ts";
import { CLIENT_FLAGS, type ClientDecl } from "./index.ts";
import type { DeclaredFields } from "./declared-fields.ts";
import type { CommandName, FlagBinding, FlagDecl, FlagSpec } from "./types.ts";

type Env = Record<string, string | undefined>;

/** The options `C`'s declarations fill: every field parseBound gives it, typed by its declaration's parser. */
export type BoundOptions<C extends CommandName> = DeclaredFields<ClientDecl, C>;

/** One bound flag's field value, as `spec` (a command's view of the declaration) has it. */
function boundValue(spec: FlagSpec, bind: FlagBinding, raw: RawFlags, env: Env): unknown {
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

/** A declaration as every command sees it that has no override: its spec and its common binding. */
const commonView = (decl: FlagDecl): { spec: FlagSpec; bind: FlagBinding | undefined } => {
  const { commands: _, bind, fixed: _f, ...spec } = decl;
  return { spec, bind };
};

/** A command's view of a declaration and the binding it has there; null when the command does not take the flag. */
export function commandBinding(decl: FlagDecl, command: CommandName): { spec: FlagSpec; bind: FlagBinding | undefined } | null {
  const own = decl.commands[command];
  if (own === undefined) return null;
  const { spec, bind } = commonView(decl);
  return own === true ? { spec, bind } : { spec: { ...spec, ...own }, bind: own.bind ?? bind };
}

/**
 * The fields whose flags shape `command`'s workload (their bindings say `shapesWorkload`), in declaration order:
 * every process of a sharded run must agree on them, so the shards' workload hash is made of exactly these. A field
 * fixed for the command is not among them: it is the same in every process.
 */
export function workloadFields(command: CommandName): string[] {
  return CLIENT_FLAGS.flatMap((decl) => {
    const bind = commandBinding(decl, command)?.bind;
    return bind?.shapesWorkload === true ? [bind.field] : [];
  });
}

/**
 * Where `command`'s field of a declaration comes from: its flag as the command takes it (the raw flags), or the text
 * the declaration fixes for it (`fixed`: as if given, in the declaration's common view); null when it has neither, or
 * when its binding parses nothing (a field a command's parser fills, the declaration naming it for the workload hash).
 */
function fieldSource(decl: FlagDecl, command: CommandName, raw: RawFlags): { spec: FlagSpec; bind: FlagBinding; raw: RawFlags } | null {
  const view = commandBinding(decl, command);
  const fixed = decl.fixed?.[command];
  const source = view !== null ? { ...view, raw } : fixed !== undefined ? { ...commonView(decl), raw: fixed === null ? {} : { [decl.name]: fixed } } : null;
  if (source === null || source.bind === undefined || (source.bind.parse === undefined && source.bind.value === undefined)) return null;
  return { spec: source.spec, bind: source.bind, raw: source.raw };
}

/**
 * Every field `command`'s options hold from a declaration - each flag it takes that is bound, and each field a
 * declaration fixes for it - parsed: field name -> value, in declaration order. A command's parser spreads these and
 * adds only what relates several flags. `only`: just these fields (a mode that reads few of the command's flags).
 */
export function parseBound<C extends CommandName>(command: C, raw: RawFlags, env?: Env): BoundOptions<C>;
export function parseBound<C extends CommandName, const F extends keyof BoundOptions<C>>(
  command: C,
  raw: RawFlags,
  env: Env,
  only: readonly F[],
): Pick<BoundOptions<C>, F>;
export function parseBound(command: CommandName, raw: RawFlags, env: Env = process.env, only?: readonly PropertyKey[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const decl of CLIENT_FLAGS) {
    const source = fieldSource(decl, command, raw);
    if (source !== null && (only === undefined || only.includes(source.bind.field)))
      out[source.bind.field] = boundValue(source.spec, source.bind, source.raw, env);
  }
  return out;
}
