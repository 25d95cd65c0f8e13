/**
 * `warmbench passport`: the server's cache geometry measured from outside (docs/guides/passport.md). Prepared as any
 * run (tokenizer, backend, preflight), then: page size; for a shared paged cache its capacity, a second tier, whether
 * answers are cached, when a prompt's pages enter it, the eviction order and (with --idle-wait) idle expiry; for
 * llama.cpp its slots. Bounded by --max-tokens (the capacity search reports a lower bound past it). Nothing here
 * renders or writes.
 */
import { log } from "../log.ts";
import { isInterrupt } from "../interrupt.ts";
import { prepareRun } from "../engine/prepare.ts";
import type { TargetFields } from "../config/options.ts";
import type { DeclaredFields } from "../config/flags/declared-fields.ts";
import type { ClientDecl } from "../config/flags/index.ts";
import { PASSPORT_KIND, PASSPORT_VERSION, type Passport, type PassportFigure } from "../schema/passport.ts";
import { VERSION } from "../version.ts";
import { flush, PromptDraws, type PassportContext } from "./context.ts";
import { measureCapacity, measureEviction, measureIdleExpiry, measureOutputsCached, measureSecondTier } from "./capacity.ts";
import { measureInsertAt } from "./insert-at.ts";
import { measurePageSize } from "./page-size.ts";
import { measureSlots } from "./slots.ts";

/** The passport's declarations' fields and the server target's. */
export type PassportOptions = DeclaredFields<ClientDecl, "passport"> & TargetFields;

const notMeasured = <T>(method: string, why: string): PassportFigure<T> => ({ value: null, method, uncertainty: null, why });

export async function runPassport(opts: PassportOptions, signal?: AbortSignal): Promise<Passport> {
  const t0 = performance.now();
  const measuredAt = new Date().toISOString();
  // The engine's own generation API where it returns the generated ids (llama.cpp's native /completion): the answers
  // check sends an answer back exactly.
  const { ctl, tokenizer, backend, server } = await prepareRun(opts, signal, { outputIds: true });
  // What was measured, in words: said on an interrupt (exit 130), which ends the passport before it is whole.
  const soFar: string[] = [];
  const interrupted = (err: unknown): never => {
    if (isInterrupt(err)) log.warn(`passport interrupted; measured before it: ${soFar.length === 0 ? "nothing" : soFar.join("; ")}`);
    throw err;
  };
  const measure = async (): Promise<Passport> => {
    const ctx: PassportContext = { backend, ctl, server, tokenizer, opts, io: { signal }, sent: { count: 0, failures: [] } };
    const draws = new PromptDraws(tokenizer.population, opts.seed);
    const perSlot = (server.cacheSlots ?? null) !== null;
    log.info("Measuring the cache's page size ...");
    await flush(ctx);
    const slots = perSlot
      ? await measureSlots(ctx, draws, server.info.contextLength)
      : notMeasured<Passport["slots"]["value"] & object>("llama.cpp slots", "the server has one shared cache, not per-slot caches");
    soFar.push(`slots ${said(slots)}`);
    const slotContext = slots.value?.context_tokens ?? null;
    await flush(ctx);
    const pageSize = await measurePageSize(ctx, draws, slotContext);
    soFar.push(`page size ${said(pageSize)}`);
    const page = pageSize.value ?? server.pageSize;
    let capacity: Passport["capacity_tokens"];
    let secondTier: Passport["second_tier"];
    let eviction: Passport["eviction"];
    if (perSlot) {
      capacity = {
        value: slotContext,
        method: "a slot holds one sequence, up to its context (the slots figure)",
        uncertainty: slots.uncertainty,
        why: "per slot: the next prompt in a slot replaces what it does not share with the last",
      };
      secondTier = {
        value: {
          present: slots.value?.ram_cache_restores ?? false,
          total_capacity_tokens: null,
          ttft_device_hit_ms: null,
          ttft_second_tier_hit_ms: null,
          ttft_cold_ms: null,
        },
        method: "the host-RAM prompt cache: an erased slot's prompt comes back cached (found at preflight)",
        uncertainty: null,
        why: "its capacity is --cache-ram MiB, not measured in tokens",
      };
      eviction = notMeasured("eviction order", "a slot holds one sequence: the next prompt replaces it (least recently used slot first when unpinned)");
    } else {
      log.info(`Searching the cache's capacity (page ${page}, up to ${opts.maxTokens} tokens) ...`);
      capacity = await measureCapacity(ctx, draws, page, opts.maxTokens);
      const bounded = capacity.uncertainty?.startsWith("a lower bound") === true;
      secondTier =
        bounded || capacity.value === null
          ? notMeasured("a second tier", "the first tier's capacity was not reached within --max-tokens")
          : await measureSecondTier(ctx, draws, page, capacity.value, opts.maxTokens);
      eviction =
        bounded || capacity.value === null
          ? notMeasured("eviction order", "the capacity was not reached within --max-tokens")
          : await measureEviction(ctx, draws, page, capacity.value);
    }
    soFar.push(`capacity ${said(capacity)}`, `second tier ${said(secondTier)}`, `eviction ${said(eviction)}`);
    log.info("Checking whether answers are cached ...");
    const outputs = await measureOutputsCached(ctx, draws, page);
    log.info("Checking when a prompt's pages enter the cache ...");
    const insertAt = perSlot
      ? notMeasured<"prefill" | "finish">("insert at", "a slot caches its sequence as it runs; the slots figure says what it keeps")
      : await measureInsertAt(ctx, draws, page);
    soFar.push(`answers cached ${said(outputs)}`, `insert at ${said(insertAt)}`);
    const idle = await measureIdleExpiry(ctx, draws, page, opts.idleWaitS);
    await flush(ctx);
    return {
      kind: PASSPORT_KIND,
      version: PASSPORT_VERSION,
      warmbench_version: VERSION,
      measured_at: measuredAt,
      base_url: opts.baseUrl,
      engine: server.engine?.name ?? backend.engine,
      server_version: server.info.version,
      page_size_tokens: pageSize,
      capacity_tokens: capacity,
      outputs_cached: outputs,
      insert_at: insertAt,
      eviction,
      idle_expiry: idle,
      second_tier: secondTier,
      slots,
      stated: {
        page_size: server.info.pageSize,
        capacity_tokens: server.info.cacheCapacityTokens,
        host_capacity_tokens: server.info.hostCacheCapacityTokens,
        slots: server.cacheSlots ?? null,
      },
      requests_sent: ctx.sent.count,
      requests_failed: ctx.sent.failures.length,
      failures: ctx.sent.failures.slice(0, 5),
      wall_s: (performance.now() - t0) / 1000,
    };
  };
  return measure().catch(interrupted);
}

/** A figure in a few words: its value and how exact, or why there is none. */
function said(f: PassportFigure<unknown>): string {
  if (f.value === null) return `not measured (${f.why ?? "no reason given"})`;
  const value = typeof f.value === "object" ? JSON.stringify(f.value) : String(f.value);
  return f.uncertainty === null ? value : `${value} (${f.uncertainty})`;
}
