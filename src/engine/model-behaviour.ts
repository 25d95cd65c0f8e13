/**
 * How the cache model takes the server to cache: what --server-cache states, and where it leaves a way open, what
 * the passport measured (--passport: whether answers are cached). Both unknown: the model brackets both ways.
 */
import { UNKNOWN_BEHAVIOUR, type CacheBehaviour } from "../config/cache-behaviour.ts";
import type { RunOptions } from "../config/options.ts";

export function modelBehaviour(opts: Pick<RunOptions, "serverCache" | "passport">): CacheBehaviour {
  const stated = opts.serverCache ?? UNKNOWN_BEHAVIOUR;
  const measured = opts.passport?.answersCached ?? null;
  if (stated.answersCached !== "either" || measured === null) return stated;
  return { ...stated, answersCached: measured };
}
