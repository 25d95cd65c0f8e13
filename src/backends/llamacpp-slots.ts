/**
 * llama.cpp's slot endpoints (docs/protocol.md §8, docs/llamacpp.md): GET /props (slot count, context per
 * slot), GET /slots (one object per slot), POST /slots/{id}?action=erase (empties one slot's prompt cache; 501
 * unless the server was started with --slot-save-path), and one short non-streamed completion for the checks.
 */
import { BenchError } from "../errors.ts";
import { controlFetch, controlText, type Control } from "./http.ts";
import { isObject } from "./json.ts";

/** Said with every 501 of a slot action: the flag llama-server needs, which its README does not mention. */
const ERASE_HINT = "llama-server answers slot actions only when started with --slot-save-path DIR (any writable folder): restart it so, or use --flush none";

const CONTROL_TIMEOUT_MS = 15_000;

/** GET /props as an object; null when the server has no such endpoint (it is not llama.cpp) or answers no JSON object. */
export async function fetchProps(ctl: Control): Promise<Record<string, unknown> | null> {
  const res = await controlFetch(ctl, "/props", { timeoutMs: CONTROL_TIMEOUT_MS });
  const body = await controlText(ctl, res, "/props");
  if (res.status !== 200) return null;
  try {
    const parsed: unknown = JSON.parse(body);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

const positiveInt = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : null);

/** `total_slots` of /props (the server's -np); null when absent. */
export function slotCountOf(props: Record<string, unknown>): number | null {
  return positiveInt(props.total_slots);
}

/** Context per slot, tokens (`default_generation_settings.n_ctx`): a prompt plus its output must fit in it. */
export function slotContextOf(props: Record<string, unknown>): number | null {
  const settings = props.default_generation_settings;
  return isObject(settings) ? positiveInt(settings.n_ctx) : null;
}

/**
 * The ids of every slot, from GET /slots; a server started with --no-slots answers 501 there, and its slots are
 * then 0..total_slots-1 from /props.
 */
export async function listSlotIds(ctl: Control): Promise<number[]> {
  const res = await controlFetch(ctl, "/slots", { timeoutMs: CONTROL_TIMEOUT_MS });
  const body = await controlText(ctl, res, "/slots");
  if (res.status === 200) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new BenchError(`GET /slots did not answer JSON: ${body.slice(0, 100)}`);
    }
    const ids = Array.isArray(parsed) ? parsed.map((s) => (isObject(s) ? s.id : undefined)).filter((id) => typeof id === "number") : [];
    if (ids.length > 0) return ids as number[];
    throw new BenchError(`GET /slots listed no slot: ${body.slice(0, 100)}`);
  }
  const props = await fetchProps(ctl);
  const count = props === null ? null : slotCountOf(props);
  if (count === null) throw new BenchError(`GET /slots answered ${res.status} and /props has no total_slots: cannot find the slots to erase`);
  return Array.from({ length: count }, (_, i) => i);
}

/** POST /slots/{id}?action=erase; returns the tokens it dropped. A 501 is the --slot-save-path hint. */
export async function eraseSlot(ctl: Control, id: number): Promise<number> {
  const path = `/slots/${id}?action=erase`;
  const res = await controlFetch(ctl, path, { method: "POST", timeoutMs: 60_000, body: "{}" });
  const body = (await controlText(ctl, res, path)).trim();
  if (res.status === 501) throw new BenchError(`POST ${path} answered 501: ${ERASE_HINT}`);
  if (res.status !== 200) throw new BenchError(`POST ${path} answered ${res.status}${body ? `: ${body.slice(0, 200)}` : ""}`);
  try {
    const parsed: unknown = JSON.parse(body);
    return isObject(parsed) && typeof parsed.n_erased === "number" ? parsed.n_erased : 0;
  } catch {
    return 0;
  }
}

/** Erases every slot the server lists (an erase of a busy slot waits for it, so nothing of ours may still run). */
export async function eraseAllSlots(ctl: Control): Promise<void> {
  for (const id of await listSlotIds(ctl)) await eraseSlot(ctl, id);
}

/** One short request of a check: these ids, one output token, optionally pinned to a slot. */
export interface ShortCompletion {
  ids: readonly number[];
  model: string | null;
  slot: number | null;
}

/**
 * POST /v1/completions, not streamed, with the prompt cache on; returns the prompt tokens the server served from
 * its cache (usage.prompt_tokens_details.cached_tokens, else timings.cache_n), -1 when it says neither.
 */
export async function shortCompletion(ctl: Control, c: ShortCompletion): Promise<number> {
  const body = JSON.stringify({
    ...(c.model === null ? {} : { model: c.model }),
    prompt: c.ids,
    max_tokens: 1,
    temperature: 0,
    stream: false,
    cache_prompt: true,
    ...(c.slot === null ? {} : { id_slot: c.slot }),
  });
  const res = await controlFetch(ctl, "/v1/completions", { method: "POST", timeoutMs: 120_000, body });
  const text = await controlText(ctl, res, "/v1/completions");
  if (res.status !== 200) throw new BenchError(`POST /v1/completions (a cache check) answered ${res.status}: ${text.slice(0, 200)}`);
  try {
    return cachedTokensOf(JSON.parse(text));
  } catch {
    throw new BenchError(`POST /v1/completions (a cache check) did not answer JSON: ${text.slice(0, 100)}`);
  }
}

/** usage.prompt_tokens_details.cached_tokens, else timings.cache_n (llama.cpp reports both, equal); -1 if neither. */
export function cachedTokensOf(response: unknown): number {
  if (!isObject(response)) return -1;
  const usage = response.usage;
  if (isObject(usage) && isObject(usage.prompt_tokens_details) && typeof usage.prompt_tokens_details.cached_tokens === "number") {
    return usage.prompt_tokens_details.cached_tokens;
  }
  const timings = response.timings;
  if (isObject(timings) && typeof timings.cache_n === "number") return timings.cache_n;
  return -1;
}
