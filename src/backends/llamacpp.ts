/**
 * llama.cpp's llama-server (docs/protocol.md §8, docs/llamacpp.md): OpenAI-compatible endpoints with token-id
 * prompts (and the native /completion, whose stream carries the generated ids: multi-turn's), one prompt cache per slot (`-np`), token-granular (page size 1), cached tokens in
 * usage.prompt_tokens_details.cached_tokens and timings.cache_n.
 *
 * - Flush: erase every slot (GET /slots, then POST /slots/{i}?action=erase); 501 means the server lacks
 *   --slot-save-path. An erase does not reach the host-RAM prompt cache (--cache-ram, on by default): the
 *   preflight checks for it by behaviour (llamacpp-ram-cache.ts) and reports it as the flush's gap.
 * - Warm: the server keeps one cache per slot and a request reuses only the slot it lands on, so the sweep warms
 *   every slot (cacheSlots) by pinning one warm request to each (`id_slot`); measured requests are not pinned.
 * - More requests in flight than slots wait in the server's queue (maxRunning), which the sweep explains.
 */
import { BenchError } from "../errors.ts";
import { NO_SERVER_INFO } from "./server-info.ts";
import { composeBackend, type EngineControl } from "./engine.ts";
import type { Control } from "./http.ts";
import { isObject } from "./json.ts";
import { findRamCache } from "./llamacpp-ram-cache.ts";
import { eraseAllSlots, fetchProps, slotContextOf, slotCountOf } from "./llamacpp-slots.ts";
import { listModels, modelIdOf } from "./openai.ts";
import type { Backend, BodyParams, FlushOptions, FlushResult, PreflightInput, ServerProfile } from "./types.ts";
import { completionsWire, type Wire } from "./wires.ts";

/** llama.cpp reuses any common prefix, token by token. */
const PAGE_SIZE = 1;
/** Used for the RAM-cache check's ids when /v1/models does not say n_vocab (every vocabulary is at least this big). */
const FALLBACK_VOCAB = 32_000;

async function preflightLlamacpp(ctl: Control, p: PreflightInput, _wire: Wire): Promise<ServerProfile> {
  const props = p.known?.props ?? (await fetchProps(ctl));
  if (props === null) {
    throw new BenchError(
      `${ctl.baseUrl}/props did not answer: this does not look like llama.cpp's llama-server (check --base-url/--port, or use --backend auto)`,
    );
  }
  const slots = slotCountOf(props);
  if (slots === null) throw new BenchError(`${ctl.baseUrl}/props has no total_slots: cannot tell how many slot caches to warm and erase`);
  const models = await listModels(ctl);
  const model = p.servedModelName ?? modelIdOf(models);
  const warnings: string[] = [];
  const flushGap = p.checkFlush === true ? await findRamCache(ctl, model, vocabSizeOf(models)) : null;
  if (flushGap !== null) warnings.push(`llama.cpp: ${flushGap}`);
  const build = typeof props.build_info === "string" ? props.build_info : null;
  return {
    info: {
      ...NO_SERVER_INFO,
      source: "/props",
      version: build,
      pageSize: PAGE_SIZE,
      incremental: true,
      contextLength: slotContextOf(props),
      raw: props,
    },
    model,
    pageSize: p.pageSize ?? PAGE_SIZE,
    pageSizeSource: p.pageSize !== null ? "flag" : "backend default",
    textMode: "incremental",
    warnings,
    engine: { name: "llama.cpp", source: "flag", evidence: `/props: ${slots} slot${slots === 1 ? "" : "s"}${build ? `, build ${build}` : ""}` },
    cacheSlots: slots,
    maxRunning: slots,
    flushGap,
  };
}

/** n_vocab of the first /v1/models entry's `meta` (llama.cpp's), else a size every vocabulary has. */
function vocabSizeOf(models: readonly Record<string, unknown>[]): number {
  const meta = models[0]?.meta;
  const n = isObject(meta) ? meta.n_vocab : undefined;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : FALLBACK_VOCAB;
}

/** Erases every slot; one call per slot, no retries (an erase of a busy slot waits for it). */
async function eraseSlotsFlush(ctl: Control, _o: FlushOptions): Promise<FlushResult> {
  await eraseAllSlots(ctl);
  return { attempts: 1 };
}

/** cache_prompt is llama.cpp's default, but a gateway's default may differ: ask for it; id_slot pins a request. */
function llamacppBodyKeys(p: BodyParams): Record<string, unknown> {
  return p.slot === null || p.slot === undefined ? { cache_prompt: true } : { cache_prompt: true, id_slot: p.slot };
}

export const llamacppEngine: EngineControl = {
  engine: "llama.cpp",
  name: "llamacpp",
  nativeEndpoint: "completions",
  // Only the native API streams the generated ids; the sweep, which needs none, keeps the OpenAI one.
  idsEndpoint: "completion",
  endpoints: ["completions", "chat", "completion"],
  preflight: preflightLlamacpp,
  flush: eraseSlotsFlush,
  bodyKeys: llamacppBodyKeys,
  // llama-server closes the connection after every streamed response, though it said Keep-Alive.
  freshConnections: true,
};

/** llama.cpp through /v1/completions with token ids. */
export const llamacppBackend: Backend = composeBackend(llamacppEngine, completionsWire);
