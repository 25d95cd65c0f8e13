/**
 * llama-server's own endpoints for the mock's llamacpp personality (docs/protocol.md §8, docs/llamacpp.md):
 * GET /props, GET /slots, POST /slots/{id}?action=erase (501 without --slot-save-path), GET /v1/models with its
 * `meta`, GET /health, and /metrics under llamacpp:* names.
 */
import type { ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import { sendJson } from "./http.ts";
import type { MockMetrics } from "./metrics.ts";
import type { MockOptions } from "./options.ts";

/** The build llama-server reports, marked as the mock's. */
const MOCK_LLAMA_BUILD = "b1-mock";

/** Context per slot: -c split evenly over -np. */
const slotContext = (opts: MockOptions): number => Math.floor(opts.contextLength / opts.slots);

export function buildProps(opts: MockOptions): Record<string, unknown> {
  return {
    default_generation_settings: { params: { temperature: 0.8, max_tokens: -1, n_predict: -1, ignore_eos: false }, n_ctx: slotContext(opts) },
    total_slots: opts.slots,
    model_alias: opts.modelName,
    model_path: opts.modelName,
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: !opts.noMetrics,
    chat_template: "",
    bos_token: "<s>",
    eos_token: "</s>",
    build_info: MOCK_LLAMA_BUILD,
    is_sleeping: false,
  };
}

export function buildLlamaModels(opts: MockOptions, createdS: number): Record<string, unknown> {
  const entry = {
    id: opts.modelName,
    object: "model",
    created: createdS,
    owned_by: "llamacpp",
    meta: { vocab_type: 2, n_vocab: opts.vocabSize, n_ctx_train: opts.contextLength, n_ctx: slotContext(opts), n_embd: 256, n_params: 1, size: 1 },
  };
  return { models: [{ name: opts.modelName, model: opts.modelName }], object: "list", data: [entry] };
}

/** GET /slots: one object per slot, as an idle or busy llama.cpp slot shows itself. */
export function handleSlots(res: ServerResponse, ctx: MockContext): void {
  const n = slotContext(ctx.opts);
  sendJson(
    res,
    200,
    ctx.slots!.describe().map((s) => ({ id: s.id, n_ctx: n, speculative: false, is_processing: s.is_processing })),
  );
}

/** POST /slots/{id}?action=erase. */
export async function handleSlotAction(res: ServerResponse, ctx: MockContext, idText: string, action: string | null): Promise<void> {
  if (ctx.opts.noSlotSavePath) {
    sendJson(res, 501, {
      error: { code: 501, message: "This server does not support slots action. Start it with `--slot-save-path`", type: "not_supported_error" },
    });
    return;
  }
  const id = Number(idText);
  if (!Number.isInteger(id) || id < 0) {
    sendJson(res, 400, { error: { code: 400, message: "Invalid slot ID", type: "invalid_request_error" } });
    return;
  }
  if (action !== "erase") {
    sendJson(res, 400, { error: { code: 400, message: "Invalid action", type: "invalid_request_error" } });
    return;
  }
  const erased = await ctx.slots!.erase(id);
  ctx.counters.flushes++;
  sendJson(res, 200, { id_slot: id, n_erased: erased });
}

/** /metrics as llama.cpp names its counters: prompt_tokens_total counts computed tokens, the cached apart. */
export function renderLlamaMetrics(metrics: MockMetrics, running: number, queued: number): string {
  const lines: string[] = [];
  const add = (name: string, type: "counter" | "gauge", help: string, value: number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
  };
  add("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", metrics.promptTokens - metrics.cachedTokens);
  add("llamacpp:prompt_tokens_cached_total", "counter", "Number of prompt tokens reused from the cache.", metrics.cachedTokens);
  add("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.", metrics.generationTokens);
  add("llamacpp:requests_processing", "gauge", "Number of requests processing.", running);
  add("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", queued);
  return lines.join("\n") + "\n";
}
