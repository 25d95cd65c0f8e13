/** Parsing of `warmbench passport` flags: the server target and run's shared flags, then its own. */
import type { PassportOptions } from "../passport/run-passport.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { parseServerTarget, parseSharedTail } from "./options.ts";

export function parsePassportOptions(
  raw: RawFlags,
  env: Record<string, string | undefined> = process.env,
): PassportOptions & { outputFile: string | null; quiet: boolean } {
  const target = parseServerTarget(raw);
  const shared = parseSharedTail(raw, env, "passport");
  // The passport's own flags, parsed from their declarations (config/flags/bound.ts).
  const bound = parseBound("passport", raw, env) as Pick<PassportOptions, "backend" | "maxTokens" | "idleWaitS">;
  return {
    backend: bound.backend,
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
    maxTokens: bound.maxTokens,
    idleWaitS: bound.idleWaitS,
  };
}
