/**
 * How a server's prefix cache behaves, as far as the client's cache model needs to know (metrics/cache-model.ts),
 * and `--server-cache`, which states it: `insert=prefill|finish`, `answers=cached|uncached`,
 * `inflight=locked|evictable`, `order=fcfs|any`, comma-separated; what is not stated is `either` (the model's range
 * covers both, and any scheduling order).
 */
import { UsageError } from "../errors.ts";

export interface CacheBehaviour {
  /** When a prompt's pages enter the cache: at its prefill's end (SGLang, vLLM), or only when the request ends. */
  insertAt: "prefill" | "finish" | "either";
  /** Whether an ended request's answer (prompt + output[:-1]) is cached too (SGLang: yes). */
  answersCached: boolean | "either";
  /** Whether a running request's pages are locked against eviction (SGLang's lock_ref). */
  inflightLocked: boolean | "either";
  /**
   * "fcfs": requests are matched in the order they were sent, each before any request sent after it inserts a page
   * (SGLang's --schedule-policy fcfs, vLLM's default scheduler, the mock); absent: any order (SGLang's default lpm
   * may prefill a later request first, whose pages can then evict an earlier one's prefix before its match).
   */
  order?: "fcfs";
}

export const UNKNOWN_BEHAVIOUR: CacheBehaviour = { insertAt: "either", answersCached: "either", inflightLocked: "either" };

const KEYS = {
  insert: { prefill: ["insertAt", "prefill"], finish: ["insertAt", "finish"] },
  answers: { cached: ["answersCached", true], uncached: ["answersCached", false] },
  inflight: { locked: ["inflightLocked", true], evictable: ["inflightLocked", false] },
  order: { fcfs: ["order", "fcfs"], any: ["order", undefined] },
} as const;

/** `insert=prefill,answers=cached,inflight=locked` (any subset; `unknown` or empty: nothing stated). */
export function parseCacheBehaviour(flag: string, text: string): CacheBehaviour {
  const out: CacheBehaviour = { ...UNKNOWN_BEHAVIOUR };
  const t = text.trim();
  if (t === "" || t === "unknown") return out;
  const seen = new Set<string>();
  for (const part of t.split(",")) {
    const [key, value, ...rest] = part.trim().split("=");
    const choices = KEYS[key as keyof typeof KEYS] as Record<string, readonly [keyof CacheBehaviour, CacheBehaviour[keyof CacheBehaviour]]> | undefined;
    const known = Object.keys(KEYS).join(", ");
    if (choices === undefined)
      throw new UsageError(`--${flag}: "${part.trim()}": name one of ${known} (e.g. insert=prefill,answers=cached,inflight=locked,order=fcfs)`);
    const pick = value === undefined || rest.length > 0 ? undefined : choices[value];
    if (pick === undefined) throw new UsageError(`--${flag}: "${part.trim()}": ${key} is one of ${Object.keys(choices).join(", ")}`);
    if (seen.has(key!)) throw new UsageError(`--${flag}: ${key} is stated twice`);
    seen.add(key!);
    if (pick[1] === undefined) delete (out as unknown as Record<string, unknown>)[pick[0]];
    else (out as unknown as Record<string, unknown>)[pick[0]] = pick[1];
  }
  return out;
}
