/** Bodies of the mock's informational endpoints, shaped like SGLang's (docs/protocol.md §2.2). */
import type { MockOptions } from "./options.ts";

/** The version the mock reports; "-mock" so nobody mistakes it for a real server. */
export const MOCK_VERSION = "0.5.17-mock";

/** GET /model_info and /get_model_info. */
export function buildModelInfo(opts: MockOptions): Record<string, unknown> {
  return {
    model_path: opts.modelName,
    tokenizer_path: opts.modelName,
    is_generation: true,
    preferred_sampling_params: null,
    weight_version: "default",
    has_image_understanding: false,
    has_audio_understanding: false,
    model_type: "mock",
    architectures: ["MockForCausalLM"],
  };
}

/** Live numbers /server_info reports next to the ServerArgs fields. */
export interface ServerInfoState {
  port: number;
  maxReqInputLen: number;
  startupTimeS: number;
  running: number;
  queued: number;
  cacheTokens: number;
}

/** GET /server_info and /get_server_info: ServerArgs-like fields plus scheduler info. */
export function buildServerInfo(opts: MockOptions, state: ServerInfoState): Record<string, unknown> {
  return {
    model_path: opts.modelName,
    tokenizer_path: opts.modelName,
    served_model_name: opts.modelName,
    host: opts.host,
    port: state.port,
    context_length: opts.contextLength,
    page_size: opts.pageSize,
    max_running_requests: opts.maxRunning,
    stream_interval: opts.streamInterval,
    incremental_streaming_output: opts.incremental,
    disable_radix_cache: false,
    // HiCache as SGLang describes it: the host pool holds hicache_ratio x the device pool when hicache_size is 0.
    enable_hierarchical_cache: opts.hostCacheTokens > 0,
    hicache_ratio: opts.hostCacheTokens > 0 && opts.cacheTokens > 0 ? opts.hostCacheTokens / opts.cacheTokens : 2.0,
    hicache_size: 0,
    enable_cache_report: false,
    enable_metrics: !opts.noMetrics,
    skip_tokenizer_init: false,
    allow_auto_truncate: false,
    weight_version: "default",
    max_total_num_tokens: opts.cacheTokens,
    max_req_input_len: state.maxReqInputLen,
    internal_states: [
      {
        last_gen_throughput: 0,
        memory_usage: { token_usage: state.cacheTokens / Math.max(1, opts.cacheTokens) },
        running_requests: state.running,
        waiting_requests: state.queued,
      },
    ],
    version: MOCK_VERSION,
    status: "ready",
    startup_time: state.startupTimeS,
    mock: {
      ttft_base_ms: opts.ttftBaseMs,
      prefill_us_per_token: opts.prefillUsPerToken,
      itl_ms: opts.itlMs,
      host_cache_tokens: opts.hostCacheTokens,
      host_load_us_per_token: opts.hostLoadUsPerToken,
      serial_prefill: opts.serialPrefill,
      vocab_size: opts.vocabSize,
    },
  };
}

/** GET /v1/models. */
export function buildModelList(opts: MockOptions, createdS: number): Record<string, unknown> {
  return { object: "list", data: [buildModelCard(opts, createdS)] };
}

/** One entry of /v1/models (also GET /v1/models/{name}). */
export function buildModelCard(opts: MockOptions, createdS: number): Record<string, unknown> {
  return {
    id: opts.modelName,
    object: "model",
    created: createdS,
    owned_by: "sglang",
    root: opts.modelName,
    parent: null,
    max_model_len: opts.contextLength,
  };
}
