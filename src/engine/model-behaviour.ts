/**
 * How the cache model takes the server to cache: what --server-cache states, and where it leaves a way open, what
 * the passport measured (--passport: whether answers are cached, when a prompt is). Both unknown: the model brackets
 * both ways.
 */
import { UNKNOWN_BEHAVIOUR, type CacheBehaviour } from "../config/cache-behaviour.ts";
import type { RunOptions } from "../config/options.ts";

export function modelBehaviour(opts: Partial<Pick<RunOptions, "serverCache" | "passport">>): CacheBehaviour {
  const stated = opts.serverCache ?? UNKNOWN_BEHAVIOUR;
  const answers = opts.passport?.answersCached ?? null;
  const insertAt = opts.passport?.insertAt ?? null;
  return {
    ...stated,
    answersCached: stated.answersCached === "either" && answers !== null ? answers : stated.answersCached,
    insertAt: stated.insertAt === "either" && insertAt !== null ? insertAt : stated.insertAt,
  };
}
