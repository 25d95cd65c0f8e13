/**
 * llama.cpp's native POST /completion stream for the mock's llamacpp personality (docs/llamacpp.md, "Native
 * POST /completion"): one partial event per generated token, `{"index":0,"content":<its text>,"tokens":[<its id>]
 * (with return_tokens, else []),"stop":false,"id_slot":-1,"tokens_predicted":N,"tokens_evaluated":P}`, then the final
 * `"stop": true` event (content "" and tokens [] when streamed, the totals, stop_type, tokens_cached and timings with
 * cache_n), and no `[DONE]`. The mock's words are whole characters, so it never holds a token back as llama.cpp
 * does one whose text ends inside a UTF-8 character.
 */
import { sendJson } from "./http.ts";
import { llamaTimings, type FormatInput } from "./openai-formats.ts";
import { openaiError } from "./openai-request.ts";
import { GeneratedOutput, outputTokenText } from "./output.ts";
import { logprobAnswer } from "./logprobs.ts";
import type { WireFormat } from "./stream-driver.ts";

export function llamacppNative(f: FormatInput): WireFormat {
  const output = new GeneratedOutput(f.vocabSize);
  const promptTokens = f.usage.promptTokens;
  let streamed = 0;
  const partial = (k: number, text: string, withId: boolean): string =>
    JSON.stringify({
      index: 0,
      content: text,
      tokens: f.params.returnTokens && withId ? [output.ids[k - 1]] : [],
      stop: false,
      id_slot: -1,
      tokens_predicted: k,
      tokens_evaluated: promptTokens,
    });
  const final = (n: number, content: string, tokens: number[]): Record<string, unknown> => ({
    index: 0,
    content,
    tokens,
    // The slot that ran it, as llama.cpp names it in the final event (its choice where the request named none).
    id_slot: f.usage.slot ?? f.params.idSlot ?? 0,
    stop: true,
    model: f.model,
    tokens_predicted: n,
    tokens_evaluated: promptTokens,
    generation_settings: { n_predict: f.params.maxTokens, temperature: f.params.temperature, ignore_eos: f.params.ignoreEos, stream: f.params.stream },
    prompt: "",
    has_new_line: false,
    truncated: false,
    stop_type: "limit",
    stopping_word: "",
    // The slot holds the prompt and the output but its last token, which was never decoded.
    tokens_cached: promptTokens + n - 1,
    timings: llamaTimings(f.usage, n),
  });
  return {
    sendsDone: false,
    tokenEvent: (n, _done, extra) => {
      output.growTo(n);
      // One event per token, as llama.cpp streams them, written together when the mock's step made several.
      const events: string[] = [];
      for (let k = streamed + 1; k <= n; k++) events.push(partial(k, outputTokenText(output.ids[k - 1] as number) + (k === n ? extra : ""), true));
      // A step without a new token (never expected) still writes one event, carrying no id twice.
      if (events.length === 0) events.push(partial(n, extra, false));
      streamed = n;
      return events.join("\n\ndata: ");
    },
    abortEvent: () => JSON.stringify({ error: { code: 500, message: "mock: injected abort", type: "server_error" } }),
    errorEvent: () => JSON.stringify({ error: { code: 500, message: "mock: injected error", type: "server_error" } }),
    trailerEvents: (n) => [JSON.stringify(final(n, "", []))],
    sendWhole: (res, n) => {
      if (f.params.logprobs !== null) {
        // llama.cpp's completion_probabilities: per token its id, text, bytes, logprob and the n_probs best.
        const a = logprobAnswer(n, f.vocabSize, f.params.logprobs, f.usage.cachedTokens, f.faults);
        const entry = (id: number, logprob: number) => {
          const token = outputTokenText(id);
          return { id, token, bytes: [...new TextEncoder().encode(token)], logprob };
        };
        sendJson(res, 200, {
          ...final(n, a.ids.map(outputTokenText).join(""), f.params.returnTokens ? a.ids.slice() : []),
          completion_probabilities: a.ids.map((id, i) => ({ ...entry(id, a.chosen[i]!), top_logprobs: a.top[i]!.map((t) => entry(t.id, t.logprob)) })),
        });
        return;
      }
      output.growTo(n);
      sendJson(res, 200, final(n, output.text, f.params.returnTokens ? output.ids.slice() : []));
    },
    sendWholeFault: (res, fault, n) =>
      fault === "abort" ? sendJson(res, 200, final(n, output.text, [])) : sendJson(res, 500, openaiError("mock: injected error", "InternalServerError", 500)),
  };
}
