/**
 * Chat streams (/v1/chat/completions) and llama.cpp's chunks through the OpenAI scanner: the role chunk and the
 * closing empty delta hold no token, content deltas do, usage counts as on completions, timings.cache_n stands in
 * for a missing cached_tokens; the byte readers agree with JSON.parse on every shape.
 */
import { describe, expect, test } from "bun:test";
import { extractOpenaiText, locateOpenaiText, scanOpenaiEvent, scanOpenaiEventByParsing } from "../../../src/backends/openai-events.ts";
import { decodeEscapedText } from "../../../src/client/text-bytes.ts";
import { createEventFields, type EventFields } from "../../../src/backends/types.ts";

const encoder = new TextEncoder();

function scanAll(payloads: string[], scan = scanOpenaiEvent): { kinds: string[]; snapshots: EventFields[] } {
  const fields = createEventFields();
  const snapshots: EventFields[] = [];
  const kinds = payloads.map((p) => {
    const kind = scan(encoder.encode(p), fields);
    snapshots.push({ ...fields });
    return kind;
  });
  return { kinds, snapshots };
}

const chunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...extra,
  });
const usageChunk = (completion: number, cached: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    choices: [],
    usage: { prompt_tokens: 9, completion_tokens: completion, total_tokens: 9 + completion, prompt_tokens_details: { cached_tokens: cached } },
    ...extra,
  });

describe("chat streams", () => {
  test("vLLM with continuous usage: the role chunk reports 0 tokens (no TTFT there), deltas count as usage says", () => {
    const u = (n: number) => ({ usage: { prompt_tokens: 9, completion_tokens: n, total_tokens: 9 + n } });
    const { kinds, snapshots } = scanAll([
      chunk({ role: "assistant", content: "" }, null, u(0)),
      chunk({ content: " the" }, null, u(1)),
      chunk({ content: " cat" }, "length", u(2)),
      usageChunk(2, 8),
      "[DONE]",
    ]);
    expect(kinds).toEqual(["tokens", "tokens", "tokens", "other", "done"]);
    expect(snapshots.map((s) => s.completionTokens).slice(0, 4)).toEqual([0, 1, 2, 2]);
    expect(snapshots[2]!.finishType).toBe("length");
    expect(snapshots[3]!.cachedTokens).toBe(8);
  });

  test("llama.cpp (no per-chunk usage): role with null content and the closing empty delta count nothing", () => {
    const { kinds, snapshots } = scanAll([
      chunk({ role: "assistant", content: null }),
      chunk({ content: ".tabs" }),
      chunk({ content: "" }),
      chunk({ content: ".tabs" }),
      chunk({}, "length"),
      usageChunk(3, 5, { timings: { cache_n: 5, prompt_n: 4 } }),
      "[DONE]",
    ]);
    expect(kinds).toEqual(["tokens", "tokens", "tokens", "tokens", "tokens", "other", "done"]);
    // Empty content (a token held back as half a character) is no token until the usage chunk says so.
    expect(snapshots.map((s) => s.completionTokens)).toEqual([0, 1, 1, 2, 2, 3, 3]);
    expect(snapshots[4]!.finishType).toBe("length");
    expect(snapshots[5]!.cachedTokens).toBe(5);
  });

  test("completions chunk without cached_tokens: llama.cpp's timings.cache_n", () => {
    const payload = JSON.stringify({
      choices: [{ text: "", index: 0, logprobs: null, finish_reason: "length" }],
      usage: { completion_tokens: 2, prompt_tokens: 9 },
      timings: { cache_n: 7, prompt_n: 2 },
    });
    const { snapshots } = scanAll([payload]);
    expect(snapshots[0]!.cachedTokens).toBe(7);
    expect(snapshots[0]!.completionTokens).toBe(2);
  });

  test("an abort finish in a chat chunk fails the request", () => {
    const { kinds } = scanAll([chunk({ content: "a" }), chunk({}, "abort")]);
    expect(kinds).toEqual(["tokens", "abort"]);
  });

  test("the delta's content is the text; extractOpenaiText and locateOpenaiText agree", () => {
    const payload = encoder.encode(chunk({ content: 'caf\u00e9 "x" \\n 猫' }));
    const located = { textStart: -2, textEnd: -2 };
    locateOpenaiText(payload, located);
    expect(decodeEscapedText(payload.subarray(located.textStart, located.textEnd))).toBe('caf\u00e9 "x" \\n 猫');
    expect(extractOpenaiText(payload)).toBe('caf\u00e9 "x" \\n 猫');
    expect(extractOpenaiText(encoder.encode(chunk({ role: "assistant", content: null })))).toBe("");
  });
});

describe("the byte readers read chat and llama.cpp chunks exactly as JSON.parse does", () => {
  const shapes: Array<[string, string[]]> = [
    ["vLLM chat", [chunk({ role: "assistant", content: "" }), chunk({ content: "x" }), chunk({ content: "y" }, "length"), usageChunk(2, 0)]],
    [
      "llama.cpp chat",
      [chunk({ role: "assistant", content: null }), chunk({ content: "x" }), chunk({}, "length"), usageChunk(1, 3, { timings: { cache_n: 3 } })],
    ],
    [
      "llama.cpp completions",
      [
        JSON.stringify({ choices: [{ text: ".t", index: 0, logprobs: null, finish_reason: null }], created: 1, object: "text_completion", id: "chatcmpl-x" }),
        JSON.stringify({
          choices: [{ text: "", index: 0, logprobs: null, finish_reason: "length" }],
          usage: { completion_tokens: 1, prompt_tokens: 4, total_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } },
          timings: { cache_n: 3 },
        }),
      ],
    ],
    ["tool-call style delta (no content)", [chunk({ tool_calls: [] }), chunk({ content: null, reasoning_content: "r" })]],
    ["delta that is not an object", [chunk("x"), chunk(null)]],
  ];
  for (const [name, payloads] of shapes) {
    test(name, () => {
      const fast = scanAll(payloads);
      const parsed = scanAll(payloads, scanOpenaiEventByParsing);
      expect(fast.kinds).toEqual(parsed.kinds);
      const counts = (s: EventFields[]) => s.map((f) => [f.completionTokens, f.cachedTokens, f.finishType, f.message]);
      expect(counts(fast.snapshots)).toEqual(counts(parsed.snapshots));
    });
  }
});
