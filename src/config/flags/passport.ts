/**
 * Flags of `warmbench passport`: its own (the search's bound, the idle wait) declared here. The server flags of `run`
 * it takes with run's meaning are run's declarations (measure.ts), which name passport among their commands. It takes
 * no --page-size: the page size is what it measures.
 */
import { FLAG_MAXIMA } from "../bounds.ts";
import { parseIntFlag, parseNumberFlag } from "../flag-values.ts";
import { bindField } from "./binding.ts";
import type { FlagDecl } from "./types.ts";

/** Defaults of the passport's own flags (the declarations and the parser read them). */
const PASSPORT_DEFAULTS = {
  /** The capacity search stops here and reports a lower bound: about a minute of prefill on one GPU. */
  maxTokens: 2_000_000,
  idleWaitS: 0,
} as const;

const DECLS = [
  {
    name: "max-tokens",
    type: "string" as const,
    help: "Most tokens the capacity search fills the cache with; past it the capacity is reported as a lower bound",
    default: PASSPORT_DEFAULTS.maxTokens,
    commands: { passport: true },
    bind: bindField("maxTokens", (t, f) => parseIntFlag(f, t, 1, FLAG_MAXIMA["max-tokens"]?.max)),
  },
  {
    name: "idle-wait",
    type: "string" as const,
    help: "Seconds a cached prompt is left idle before it is checked again (idle expiry); 0: not measured",
    default: PASSPORT_DEFAULTS.idleWaitS,
    commands: { passport: true },
    bind: bindField("idleWaitS", (t, f) => parseNumberFlag(f, t, 0)),
  },
] as const;

export const PASSPORT_FLAGS: readonly FlagDecl[] = DECLS;

/** The declarations as written, for the types of the options they fill. */
export type PassportDecl = (typeof DECLS)[number];
