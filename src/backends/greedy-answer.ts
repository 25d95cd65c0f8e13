/**
 * One greedy answer with its log-probabilities, asked whole (not streamed) for the cache-fidelity check, in each
 * engine's own format (docs/peers.md section (f)): SGLang's native /generate (`return_logprob`, `top_logprobs_num`;
 * `meta_info.output_token_logprobs` and `output_top_logprobs` as [logprob, token_id, text] tuples), vLLM's and other
 * OpenAI servers' /v1/completions (`logprobs: k`; `choices[0].logprobs.tokens` and `top_logprobs` dicts, tokens named
 * `token_id:N` where vLLM's `return_tokens_as_token_ids` is honoured, else by their text), llama.cpp's native
 * /completion (`n_probs`; `completion_probabilities[]` with `id`, `logprob` and `top_logprobs`).
 */
import type { Backend } from "./types.ts";

/** A token as the check compares it: `id:N` when the server names it by id, else `text:...`. */
type TokenKey = string;

export interface GreedyAnswer {
  tokens: TokenKey[];
  /** The chosen token's log-probability per position; null where the server gave none. */
  chosenLogprob: Array<number | null>;
  /** The top tokens per position (the chosen one included); null: the server gave no top list. */
  top: Array<Map<TokenKey, number>> | null;
  /** Cached prompt tokens the server reported; -1 when it reports none. */
  cachedTokens: number;
}

export interface GreedyRequest {
  path: string;
  body: Record<string, unknown>;
}

const byId = (id: number): TokenKey => `id:${id}`;
const byText = (text: string): TokenKey => `text:${text}`;
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** The request: temperature 0, a fixed seed where the engine takes one, `topK` log-probabilities per position. */
export function greedyRequest(
  backend: Pick<Backend, "engine" | "endpoint">,
  ids: readonly number[],
  maxNewTokens: number,
  topK: number,
  o: { model: string | null; slot: number | null; extra: Record<string, unknown> },
): GreedyRequest {
  const prompt = [...ids];
  if (backend.engine === "sglang" && backend.endpoint === "generate") {
    return {
      path: "/generate",
      body: {
        ...o.extra,
        input_ids: prompt,
        stream: false,
        return_logprob: true,
        top_logprobs_num: topK,
        logprob_start_len: -1,
        sampling_params: { max_new_tokens: maxNewTokens, temperature: 0, ignore_eos: true },
      },
    };
  }
  if (backend.engine === "llama.cpp") {
    return {
      path: "/completion",
      body: {
        ...o.extra,
        prompt,
        n_predict: maxNewTokens,
        temperature: 0,
        seed: 0,
        n_probs: topK,
        stream: false,
        cache_prompt: true,
        return_tokens: true,
        ignore_eos: true,
        ...(o.slot === null ? {} : { id_slot: o.slot }),
      },
    };
  }
  return {
    path: "/v1/completions",
    body: {
      ...o.extra,
      ...(o.model === null ? {} : { model: o.model }),
      prompt,
      max_tokens: maxNewTokens,
      temperature: 0,
      seed: 0,
      logprobs: topK,
      stream: false,
      ignore_eos: true,
      ...(backend.engine === "vllm" ? { return_tokens_as_token_ids: true } : {}),
    },
  };
}

/** The answer, or why it cannot be read (one line). */
export function parseGreedyAnswer(backend: Pick<Backend, "engine" | "endpoint">, json: unknown): GreedyAnswer | string {
  const root = obj(json);
  if (root === null) return "the answer is not a JSON object";
  if (backend.engine === "sglang" && backend.endpoint === "generate") return parseSglang(root);
  if (backend.engine === "llama.cpp") return parseLlamacpp(root);
  return parseCompletions(root);
}

function parseSglang(root: Record<string, unknown>): GreedyAnswer | string {
  const meta = obj(root.meta_info);
  const ids = root.output_ids;
  if (meta === null || !Array.isArray(ids)) return "no output_ids and meta_info in the answer";
  const tokens = ids.map((id) => byId(Number(id)));
  const chosen = Array.isArray(meta.output_token_logprobs)
    ? meta.output_token_logprobs.map((t) => (Array.isArray(t) ? num(t[0]) : null))
    : tokens.map(() => null);
  const topRaw = meta.output_top_logprobs;
  const top =
    Array.isArray(topRaw) && topRaw.length === tokens.length
      ? topRaw.map(
          (ranked) =>
            new Map(
              (Array.isArray(ranked) ? ranked : []).flatMap((t) => (Array.isArray(t) && num(t[0]) !== null ? [[byId(Number(t[1])), num(t[0])!] as const] : [])),
            ),
        )
      : null;
  return { tokens, chosenLogprob: chosen, top, cachedTokens: num(meta.cached_tokens) ?? -1 };
}

function parseLlamacpp(root: Record<string, unknown>): GreedyAnswer | string {
  const probs = root.completion_probabilities;
  const ids = Array.isArray(root.tokens) ? root.tokens : null;
  const cached = num(obj(root.timings)?.cache_n) ?? -1;
  if (Array.isArray(probs) && probs.length > 0) {
    const entries = probs.map(obj);
    const tokens = entries.map((e) => (e !== null && num(e.id) !== null ? byId(num(e.id)!) : byText(String(e?.token ?? ""))));
    const top = entries.map(
      (e) =>
        new Map(
          (Array.isArray(e?.top_logprobs) ? (e!.top_logprobs as unknown[]) : []).flatMap((t) => {
            const o = obj(t);
            const lp = num(o?.logprob);
            return o === null || lp === null ? [] : [[num(o.id) !== null ? byId(num(o.id)!) : byText(String(o.token)), lp] as const];
          }),
        ),
    );
    return { tokens, chosenLogprob: entries.map((e) => num(e?.logprob)), top, cachedTokens: cached };
  }
  if (ids === null) return "no tokens and no completion_probabilities in the answer";
  return { tokens: ids.map((id) => byId(Number(id))), chosenLogprob: ids.map(() => null), top: null, cachedTokens: cached };
}

/** `token_id:N` (vLLM's return_tokens_as_token_ids) is an id; anything else is the token's text. */
const completionsKey = (token: string): TokenKey => (/^token_id:\d+$/.test(token) ? byId(Number(token.slice(9))) : byText(token));

function parseCompletions(root: Record<string, unknown>): GreedyAnswer | string {
  const choice = Array.isArray(root.choices) ? obj(root.choices[0]) : null;
  if (choice === null) return "no choices in the answer";
  const cached = num(obj(obj(root.usage)?.prompt_tokens_details)?.cached_tokens) ?? -1;
  const lp = obj(choice.logprobs);
  if (lp === null || !Array.isArray(lp.tokens)) {
    const ids = Array.isArray(choice.token_ids) ? choice.token_ids : null;
    if (ids === null) return "the answer carries no logprobs (the server ignored `logprobs`)";
    return { tokens: ids.map((id) => byId(Number(id))), chosenLogprob: ids.map(() => null), top: null, cachedTokens: cached };
  }
  const tokens = (lp.tokens as unknown[]).map((t) => completionsKey(String(t)));
  const chosen = Array.isArray(lp.token_logprobs) ? lp.token_logprobs.map(num) : tokens.map(() => null);
  const top =
    Array.isArray(lp.top_logprobs) && lp.top_logprobs.length === tokens.length
      ? lp.top_logprobs.map((d) => new Map(Object.entries(obj(d) ?? {}).flatMap(([k, v]) => (num(v) === null ? [] : [[completionsKey(k), num(v)!] as const]))))
      : null;
  return { tokens, chosenLogprob: chosen, top, cachedTokens: cached };
}
