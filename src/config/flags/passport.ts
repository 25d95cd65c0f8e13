/**
 * Flags of `warmbench passport`: its own (the search's bound, the idle wait) declared here, and the server flags of
 * `run` it takes with run's meaning. It takes no --page-size: the page size is what it measures.
 */
import { FLAG_MAXIMA } from "../bounds.ts";
import { parseIntFlag, parseNumberFlag } from "../flag-values.ts";
import type { FlagDecl } from "./types.ts";

/** Defaults of the passport's own flags (the declarations and the parser read them). */
const PASSPORT_DEFAULTS = {
  /** The capacity search stops here and reports a lower bound: about a minute of prefill on one GPU. */
  maxTokens: 2_000_000,
  idleWaitS: 0,
} as const;

/** run's flags that passport takes, and the ones whose help differs there. */
const FROM_RUN: Record<string, true | FlagDecl["commands"]["run"]> = {
  backend: true,
  "base-url": true,
  host: true,
  port: true,
  model: true,
  tokenizer: true,
  revision: true,
  "api-key": true,
  "served-model-name": true,
  seed: { help: "Seed of the passport's random prompts" },
  "output-file": { help: "Write the passport as JSON to this file (replay and the replicas' ledger read it)" },
  "extra-request-body": true,
  "flush-deadline": true,
  "request-timeout": true,
  "stall-timeout": true,
  quiet: true,
  verbose: true,
};

/** Adds `passport` to the commands of the run flags it takes. */
export const withPassport = (decls: readonly FlagDecl[]): FlagDecl[] =>
  decls.map((d) => (d.name in FROM_RUN && d.commands.run !== undefined ? { ...d, commands: { ...d.commands, passport: FROM_RUN[d.name]! } } : d));

export const PASSPORT_FLAGS: FlagDecl[] = [
  {
    name: "max-tokens",
    type: "string",
    help: "Most tokens the capacity search fills the cache with; past it the capacity is reported as a lower bound",
    default: PASSPORT_DEFAULTS.maxTokens,
    commands: { passport: true },
    bind: { field: "maxTokens", value: (t, f) => parseIntFlag(f, t, 1, FLAG_MAXIMA["max-tokens"]?.max) },
  },
  {
    name: "idle-wait",
    type: "string",
    help: "Seconds a cached prompt is left idle before it is checked again (idle expiry); 0: not measured",
    default: PASSPORT_DEFAULTS.idleWaitS,
    commands: { passport: true },
    bind: { field: "idleWaitS", value: (t, f) => parseNumberFlag(f, t, 0) },
  },
];
