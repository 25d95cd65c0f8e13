/** Parsing of `warmbench passport` flags: the server target and run's shared flags, then its own. */
import { BACKENDS, RUN_DEFAULTS } from "../config/options.ts";
import { FLAG_MAXIMA } from "../config/bounds.ts";
import { PASSPORT_DEFAULTS } from "../config/flags/passport.ts";
import type { PassportOptions } from "../passport/run-passport.ts";
import { oneOf, parseIntFlag, parseNumberFlag, str, type RawFlags } from "../config/flag-values.ts";
import { parseServerTarget, parseSharedTail } from "./options.ts";

export function parsePassportOptions(
  raw: RawFlags,
  env: Record<string, string | undefined> = process.env,
): PassportOptions & { outputFile: string | null; quiet: boolean } {
  const target = parseServerTarget(raw);
  const shared = parseSharedTail(raw, env);
  return {
    backend: oneOf(raw, "backend", BACKENDS, RUN_DEFAULTS.backend),
    endpoint: "auto",
    ...target,
    apiKey: shared.apiKey,
    servedModelName: shared.servedModelName,
    extraRequestBody: shared.extraRequestBody,
    flushDeadlineS: shared.flushDeadlineS,
    flushServerTimeoutS: shared.flushServerTimeoutS,
    requestTimeoutS: shared.requestTimeoutS,
    stallTimeoutS: shared.stallTimeoutS,
    seed: shared.seed,
    // The flush is proven by the measurements themselves; the preflight checks what it can reach.
    flush: "auto",
    verifyCache: "warn",
    pageSize: null,
    outputFile: shared.outputFile,
    quiet: shared.quiet,
    maxTokens: parseIntFlag("max-tokens", str(raw, "max-tokens") ?? String(PASSPORT_DEFAULTS.maxTokens), 1, FLAG_MAXIMA["max-tokens"]?.max),
    idleWaitS: parseNumberFlag("idle-wait", str(raw, "idle-wait") ?? String(PASSPORT_DEFAULTS.idleWaitS), 0),
  };
}
