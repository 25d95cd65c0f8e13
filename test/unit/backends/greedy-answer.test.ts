/**
 * Greedy answers with log-probabilities in each engine's format: SGLang's /generate tuples and vLLM's completions
 * dicts written from their sources' formats, llama.cpp's native answer as the cached build served it.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { greedyRequest, parseGreedyAnswer } from "../../../src/backends/greedy-answer.ts";
import { ROOT } from "../../helpers/run-cli.ts";

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(ROOT, "test/fixtures/logprobs", name), "utf8"));
const SGLANG = { engine: "sglang", endpoint: "generate" } as const;
const VLLM = { engine: "vllm", endpoint: "completions" } as const;
const LLAMA = { engine: "llama.cpp", endpoint: "completions" } as const;

describe("parseGreedyAnswer", () => {
  test("SGLang /generate: output_ids, output_token_logprobs and output_top_logprobs tuples, meta_info.cached_tokens", () => {
    const a = parseGreedyAnswer(SGLANG, fixture("sglang-generate.json"));
    if (typeof a === "string") throw new Error(a);
    expect(a.tokens).toEqual(["id:12366", "id:13", "id:578"]);
    expect(a.chosenLogprob).toEqual([-0.0123, -0.4471, -1.2093]);
    expect([...a.top![2]!]).toEqual([
      ["id:578", -1.2093],
      ["id:1102", -1.2196],
      ["id:763", -2.5523],
    ]);
    expect(a.cachedTokens).toBe(16);
  });

  test("vLLM /v1/completions: token_id:N tokens and top_logprobs dicts, usage's cached tokens", () => {
    const a = parseGreedyAnswer(VLLM, fixture("vllm-completions.json"));
    if (typeof a === "string") throw new Error(a);
    expect(a.tokens).toEqual(["id:12366", "id:13", "id:578"]);
    expect(a.top![1]!.get("id:11")).toBe(-1.0466);
    expect(a.cachedTokens).toBe(16);
  });

  test("the same answer in both formats parses to the same tokens and top lists", () => {
    const s = parseGreedyAnswer(SGLANG, fixture("sglang-generate.json"));
    const v = parseGreedyAnswer(VLLM, fixture("vllm-completions.json"));
    if (typeof s === "string" || typeof v === "string") throw new Error("unparsed");
    expect(v.tokens).toEqual(s.tokens);
    expect(v.top!.map((m) => [...m].sort())).toEqual(s.top!.map((m) => [...m].sort()));
  });

  test("llama.cpp native /completion (the real server's answer): completion_probabilities with ids, timings.cache_n", () => {
    const raw = fixture("llamacpp-native.json") as { completion_probabilities: Array<{ id: number; top_logprobs: unknown[] }>; timings: { cache_n: number } };
    const a = parseGreedyAnswer(LLAMA, raw);
    if (typeof a === "string") throw new Error(a);
    expect(a.tokens).toEqual(raw.completion_probabilities.map((p) => `id:${p.id}`));
    expect(a.top!.every((m, i) => m.size === raw.completion_probabilities[i]!.top_logprobs.length && m.size === 3)).toBe(true);
    expect(a.cachedTokens).toBe(raw.timings.cache_n);
  });

  test("tokens named by their text (a server without return_tokens_as_token_ids) are compared by text", () => {
    const a = parseGreedyAnswer(
      { engine: "openai", endpoint: "completions" },
      {
        choices: [{ logprobs: { tokens: [" Paris", "."], token_logprobs: [-0.1, -0.2], top_logprobs: [{ " Paris": -0.1, " Lyon": -3 }, { ".": -0.2 }] } }],
      },
    );
    if (typeof a === "string") throw new Error(a);
    expect(a.tokens).toEqual(["text: Paris", "text:."]);
    expect(a.cachedTokens).toBe(-1);
  });

  test("an answer without logprobs has no top list, one without tokens is refused with the reason", () => {
    expect(parseGreedyAnswer(SGLANG, { output_ids: [1, 2], meta_info: { cached_tokens: 0 } })).toMatchObject({ tokens: ["id:1", "id:2"], top: null });
    expect(parseGreedyAnswer(VLLM, { choices: [{ text: "x", logprobs: null }] })).toMatch(/no logprobs/);
    expect(parseGreedyAnswer(LLAMA, { content: "x" })).toMatch(/no tokens/);
    expect(parseGreedyAnswer(SGLANG, [1, 2])).toMatch(/not a JSON object/);
  });
});

describe("greedyRequest", () => {
  const o = { model: "m", slot: null, extra: { lora_path: "a" } };
  test("each engine's greedy request with k log-probabilities: temperature 0, ignore_eos, not streamed", () => {
    expect(greedyRequest(SGLANG, [1, 2], 8, 5, o)).toEqual({
      path: "/generate",
      body: {
        lora_path: "a",
        input_ids: [1, 2],
        stream: false,
        return_logprob: true,
        top_logprobs_num: 5,
        logprob_start_len: -1,
        sampling_params: { max_new_tokens: 8, temperature: 0, ignore_eos: true },
      },
    });
    expect(greedyRequest(VLLM, [1, 2], 8, 5, o).body).toMatchObject({
      model: "m",
      prompt: [1, 2],
      max_tokens: 8,
      temperature: 0,
      logprobs: 5,
      stream: false,
      return_tokens_as_token_ids: true,
    });
    expect(greedyRequest({ engine: "sglang", endpoint: "completions" }, [1], 8, 5, o).body).not.toHaveProperty("return_tokens_as_token_ids");
    const llama = greedyRequest(LLAMA, [1, 2], 8, 5, { ...o, slot: 1 });
    expect(llama.path).toBe("/completion");
    expect(llama.body).toMatchObject({ prompt: [1, 2], n_predict: 8, temperature: 0, n_probs: 5, stream: false, id_slot: 1, return_tokens: true });
  });
});
