/**
 * The one shape every serving backend has, so that the sweep and the streaming client never branch on the
 * backend's name. A backend owns its quirks: its preflight (what the server is, its page size and text mode, the
 * model name to send), its defaults, its cache flush, and pure adapters (body template, event scanner, text
 * extraction); no timing and no request loop inside it.
 */
import type { BodyTemplate } from "./body.ts";
import type { Control } from "./http.ts";
import type { ByteRange } from "./json-bytes.ts";

/** What a backend is called in the pct line's `backend` key (the resolved --backend choice). */
export type BackendName = "sglang" | "openai" | "vllm" | "llamacpp";

/** The serving engine behind the URL; "openai" is any other OpenAI-compatible server (a gateway, Ollama, ...). */
export type EngineName = "sglang" | "vllm" | "llama.cpp" | "openai";

/** Which generation API the measured requests use ("completion": llama.cpp's native /completion). */
export type EndpointName = "generate" | "completions" | "chat" | "completion";

/** How prompts go out: as the token ids themselves, or as the text the tokenizer decodes them to (chat). */
export type PromptEncoding = "token_ids" | "text";

/**
 * What one SSE data payload means for the request:
 * - tokens: a chunk of generation (it may carry 0, 1 or several new tokens; see EventFields.completionTokens);
 * - other: nothing to time, but its fields may still hold final counts (the usage-only chunk after the last token);
 * - final: the stream's last event, with the final counts and no token to time (llama.cpp's native `"stop": true`
 *   event; no `[DONE]` follows it);
 * - done: `[DONE]`; error: an `{"error": ...}` event; abort: the server aborted the request; invalid: unreadable.
 */
export type EventKind = "done" | "tokens" | "error" | "abort" | "invalid" | "other" | "final";

/**
 * Fields filled by Backend.scanEvent. Create one object per request (createEventFields) and reuse it for every
 * event of that request: a backend may keep a running count in it (OpenAI streams without per-chunk usage).
 */
export interface EventFields {
  /** Cumulative output tokens so far, as of this event. */
  completionTokens: number;
  /** Prompt tokens served from the prefix cache; -1 when this event does not report it. */
  cachedTokens: number;
  /**
   * Of those, the tokens each cache tier served (SGLang HiCache `cached_tokens_details`: device = GPU radix cache,
   * host = CPU memory, storage = an L3 backend); -1 when this event does not say (older servers, other backends).
   * A server that reports the breakdown but found nothing cached says `null`: every tier is 0 then.
   */
  cachedDeviceTokens: number;
  cachedHostTokens: number;
  cachedStorageTokens: number;
  /**
   * Set by the caller once it has the request's tiers (they are constant over a stream, like cached_tokens): the
   * scanner then leaves them at -1 and skips the work. Scanners never reset it.
   */
  tiersKnown: boolean;
  /** Finish reason of this event ("length", "stop", "abort", ...); null while generating. */
  finishType: string | null;
  /** The cache slot that ran the request, where the server says (llama.cpp's final `id_slot`); -1 otherwise. */
  slot: number;
  /** Error or abort message; "" otherwise. */
  message: string;
  /**
   * This event's text as the raw content of its JSON string (still escaped, quotes excluded):
   * payload[textStart, textEnd). -1: the event has no text; TEXT_NOT_LOCATED: the scanner did not look (call
   * Backend.locateText when the text is wanted).
   */
  textStart: number;
  textEnd: number;
}

/** EventFields.textStart of a scanner that did not look for the text. */
export const TEXT_NOT_LOCATED = -2;

/** A fresh fields object, for one request. */
export function createEventFields(): EventFields {
  return {
    completionTokens: 0,
    cachedTokens: -1,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    tiersKnown: false,
    finishType: null,
    slot: -1,
    message: "",
    textStart: TEXT_NOT_LOCATED,
    textEnd: TEXT_NOT_LOCATED,
  };
}

/** Inputs of a request body template; `extra` (--extra-request-body) overrides keys like a Python dict merge. */
export interface BodyParams {
  maxNewTokens: number;
  ignoreEos: boolean;
  extra: Record<string, unknown>;
  /** Served model name; null leaves it out (the server picks its only model). Ignored by SGLang native. */
  model: string | null;
  /**
   * Pin the request to this cache slot (servers with one prefix cache per slot: llama.cpp's `id_slot`); null or
   * absent lets the server choose. Ignored where the server has one shared cache.
   */
  slot?: number | null;
}

/** How long and how a cache flush may retry. */
export interface FlushOptions {
  /** Give up after this long of "busy" answers (SGLang 400, vLLM success:false). */
  deadlineS: number;
  /** Passed as /flush_cache?timeout= (SGLang >= 0.5.10; older ignore it). Also bounds each HTTP attempt. */
  serverTimeoutS: number;
  /** Tests inject their own; the default sleep ends at once on an interrupt. */
  sleep?: (ms: number) => Promise<void>;
}

/** What the server tells about itself; every field optional because old versions say less. */
export interface ServerInfo {
  /** The endpoint that answered, or null when none did. */
  source: string | null;
  version: string | null;
  pageSize: number | null;
  /** True: text deltas (--incremental-streaming-output / --stream-output); false: cumulative; null: unknown. */
  incremental: boolean | null;
  contextLength: number | null;
  /** Longest prompt the scheduler takes (SGLang max_req_input_len, which the KV pool can make < context). */
  maxReqInputLen: number | null;
  /** Prefix-cache capacity of the device (GPU) pool, tokens: SGLang max_total_num_tokens. */
  cacheCapacityTokens: number | null;
  /** Capacity of the HiCache host tier, tokens (hicache_ratio x the device pool when hicache_size is 0). */
  hostCacheCapacityTokens: number | null;
  raw: Record<string, unknown> | null;
}

/** What the user said that a preflight needs. */
export interface PreflightInput {
  /** --page-size, or null to ask the server (else the backend's default). */
  pageSize: number | null;
  /** --served-model-name, or null to ask the server where the backend needs a name. */
  servedModelName: string | null;
  /**
   * The run flushes and verifies the cache (--flush auto, --verify-cache not off): a backend may then check at
   * preflight whether its flush can make the server cold at all (llama.cpp's host-RAM prompt cache).
   */
  checkFlush?: boolean;
  /** What engine detection already learned, so that the preflight does not ask the server twice. */
  known?: KnownServer;
}

/** Answers engine detection already has (detect.ts); a preflight reuses them instead of asking again. */
export interface KnownServer {
  /** /server_info (or /get_server_info), whatever it answered. */
  info?: ServerInfo;
  /** GET /generate was answered with something other than 404 (SGLang's route exists). */
  generateRouteChecked?: boolean;
  /** llama.cpp's GET /props. */
  props?: Record<string, unknown>;
}

/** What engine the run talks to and how that was settled; written into the run header. */
export interface EngineInfo {
  name: EngineName;
  /** "detected" by --backend auto, or named by the "flag". */
  source: "detected" | "flag";
  /** The server's answers that identified it (detected), or the backend's wire API (flag). */
  evidence: string;
}

/** Everything the sweep needs to know about the server, settled once before the first pct. */
export interface ServerProfile {
  info: ServerInfo;
  /** Model name sent in every body; null where the backend sends none (SGLang native). */
  model: string | null;
  /** KV page size for the expected cached tokens. */
  pageSize: number;
  /** Where pageSize came from. */
  pageSizeSource: "flag" | "server" | "backend default" | "passport";
  /** Whether each event's text is the whole text so far or a delta. */
  textMode: "cumulative" | "incremental";
  /** Assumptions the user should know about, one line each (logged as warnings). */
  warnings: string[];
  /** The engine; backends fill name and evidence, the sweep sets how it was chosen. */
  engine?: EngineInfo;
  /**
   * Independent prefix caches the server keeps (llama.cpp: one per slot, `-np`), each of which the warm must fill
   * and the flush proof must check; null: one cache shared by every request (SGLang's radix tree, vLLM's blocks).
   */
  cacheSlots?: number | null;
  /** Requests the server runs at once (llama.cpp's slot count); more wait in its queue. null: not known. */
  maxRunning?: number | null;
  /**
   * Why the backend's flush cannot make this server cold, found at preflight (llama.cpp with its host-RAM prompt
   * cache on: erased prompts come back); null when nothing was found. Every pct's flush then counts as unproven.
   */
  flushGap?: string | null;
}

/** Result of a successful flush: how many attempts it took. */
export interface FlushResult {
  attempts: number;
}

/** One serving backend's wire format. */
export interface Backend {
  name: BackendName;
  /** The engine this backend's preflight and flush are written for. */
  engine: EngineName;
  endpoint: EndpointName;
  /** Token ids in the body, or the text they decode to (chat messages take text only). */
  promptEncoding: PromptEncoding;
  /** Path of the streaming endpoint, e.g. "/generate" or "/v1/completions". */
  generatePath: string;
  /**
   * Open a new connection for every request: the server closes its connection after each streamed response although
   * it answered Keep-Alive (llama.cpp), so a pooled one can be reset under the next request.
   */
  freshConnections: boolean;
  /** True if every event's text is a delta whatever the server's mode (OpenAI); false: it depends (SGLang native). */
  deltaText: boolean;
  /** The stream carries the generated token ids (SGLang native, llama.cpp native): multi-turn histories are exact. */
  carriesOutputIds: boolean;
  /** The body template of every request with these parameters; only the prompt ids change per request. */
  createBodyTemplate(p: BodyParams): BodyTemplate;
  /** Hot-path classifier of one SSE data payload; fills `out`, never throws. */
  scanEvent(payload: Uint8Array, out: EventFields): EventKind;
  /** Text of one event payload ("" if none); a full parse. */
  extractText(payload: Uint8Array): string;
  /** Checks the server is this backend's kind and settles model, page size and text mode; throws BenchError if not. */
  preflight(ctl: Control, p: PreflightInput): Promise<ServerProfile>;
  /** Sets out.textStart/textEnd to the payload's text (see EventFields), -1 when it has none; never throws. */
  locateText(payload: Uint8Array, out: ByteRange): void;
  /**
   * Generated token ids one event payload carries (SGLang native `output_ids`: all so far when text is cumulative,
   * the new ones otherwise; OpenAI `choices[0].token_ids` where a server sends them), or null when it has none; a
   * full parse, called once a request ended. Multi-turn conversations continue from these exact ids.
   */
  extractOutputIds(payload: Uint8Array): number[] | null;
  /** Empties the server's prefix cache; throws BenchError when it cannot. */
  flush(ctl: Control, o: FlushOptions): Promise<FlushResult>;
}
