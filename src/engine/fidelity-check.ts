/**
 * The cache-fidelity check of one point, run after its measurement (its figures are already taken) and before the
 * next point's own flush: for each sampled prompt, flush and ask it greedily cold (the answer's own cached tokens
 * prove the flush: 0), flush again, send its shared prefix alone (one token), ask it again warm (the answer's cached
 * tokens prove the prefix was reused: at least its whole pages), and compare the two answers (metrics/fidelity.ts).
 * A sample whose cache state is not proven either way is not compared and is counted apart, with the reason.
 * Cost per sample: two flushes and three requests, none of them measured.
 */
import { isInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import { controlFetch, controlText, type Control } from "../backends/http.ts";
import { greedyRequest, parseGreedyAnswer, type GreedyAnswer } from "../backends/greedy-answer.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { RunOptions } from "../config/options.ts";
import { compareAnswers, fidelityGroup, FIDELITY_TOP_K, type FidelityComparison, type FidelityGroup } from "../metrics/fidelity.ts";

export interface FidelitySample {
  ids: readonly number[];
  /** Tokens of the shared prefix at its head. */
  prefixLen: number;
}

export interface FidelityCheckOptions {
  outputLen: number;
  tieNats: number;
  pageSize: number;
  model: string | null;
  extra: Record<string, unknown>;
  /** llama.cpp: the slot every request of a sample goes to (the warm must land where the prefix is). */
  slot: number | null;
  flushDeadlineS: number;
  flushServerTimeoutS: number;
  requestTimeoutS: number;
}

/** The check's options as a run has them (its --fidelity-tie-nats, its server, its timeouts), for answers of `outputLen`. */
export function fidelityOptions(
  ctx: {
    opts: Pick<RunOptions, "fidelity" | "extraRequestBody" | "flushDeadlineS" | "flushServerTimeoutS" | "requestTimeoutS">;
    server: Pick<ServerProfile, "pageSize" | "model" | "cacheSlots">;
  },
  outputLen: number,
): FidelityCheckOptions {
  const { opts, server } = ctx;
  return {
    outputLen,
    tieNats: opts.fidelity!.tieNats,
    pageSize: server.pageSize,
    model: server.model,
    extra: opts.extraRequestBody,
    slot: (server.cacheSlots ?? null) === null ? null : 0,
    flushDeadlineS: opts.flushDeadlineS,
    flushServerTimeoutS: opts.flushServerTimeoutS,
    requestTimeoutS: opts.requestTimeoutS,
  };
}

interface CheckContext {
  backend: Backend;
  ctl: Control;
}

async function ask(ctx: CheckContext, ids: readonly number[], maxNewTokens: number, o: FidelityCheckOptions): Promise<GreedyAnswer | string> {
  const req = greedyRequest(ctx.backend, ids, maxNewTokens, FIDELITY_TOP_K, o);
  const res = await controlFetch(ctx.ctl, req.path, { method: "POST", body: JSON.stringify(req.body), timeoutMs: o.requestTimeoutS * 1000 });
  const text = await controlText(ctx.ctl, res, req.path);
  if (!res.ok) return `POST ${req.path} answered ${res.status}: ${text.trim().slice(0, 120)}`;
  try {
    return parseGreedyAnswer(ctx.backend, JSON.parse(text));
  } catch {
    return `POST ${req.path} did not answer JSON`;
  }
}

/** One sample: the comparison, or why its cache state was not proven (not compared). */
async function checkOne(ctx: CheckContext, s: FidelitySample, o: FidelityCheckOptions): Promise<FidelityComparison | string> {
  const flush = () => ctx.backend.flush(ctx.ctl, { deadlineS: o.flushDeadlineS, serverTimeoutS: o.flushServerTimeoutS });
  const wholePages = Math.floor(s.prefixLen / o.pageSize) * o.pageSize;
  if (wholePages === 0) return "no whole page of shared prefix to reuse";
  await flush();
  const cold = await ask(ctx, s.ids, o.outputLen, o);
  if (typeof cold === "string") return cold;
  if (cold.cachedTokens < 0) return "the server reports no cached tokens, so neither answer's cache state can be proven";
  if (cold.cachedTokens > 0) return `the cold answer found ${cold.cachedTokens} tokens cached after the flush`;
  await flush();
  const primed = await ask(ctx, s.ids.slice(0, s.prefixLen), 1, o);
  if (typeof primed === "string") return primed;
  const warm = await ask(ctx, s.ids, o.outputLen, o);
  if (typeof warm === "string") return warm;
  if (warm.cachedTokens < wholePages) return `the warm answer found ${warm.cachedTokens} tokens cached, fewer than the prefix's ${wholePages}`;
  return compareAnswers(cold, warm, o.tieNats);
}

/**
 * The check of every sample, in turn. An interrupt ends it at once with what was compared so far (the samples left
 * are counted as not compared, with the reason), so the point's line - measured before the check - is still written.
 */
export async function checkFidelity(ctx: CheckContext, samples: readonly FidelitySample[], o: FidelityCheckOptions): Promise<FidelityGroup> {
  const comparisons: FidelityComparison[] = [];
  const unproven: string[] = [];
  const startedMs = performance.now();
  log.info(`Cache-fidelity check: ${samples.length} sample(s), each asked cold and warm (two flushes, three requests) ...`);
  for (const [k, s] of samples.entries()) {
    if (ctx.ctl.signal?.aborted) {
      for (let left = k; left < samples.length; left++) unproven.push("the run was interrupted before it was compared");
      break;
    }
    try {
      const r = await checkOne(ctx, s, o);
      if (typeof r === "string") unproven.push(r);
      else comparisons.push(r);
    } catch (err) {
      if (!isInterrupt(err) && !ctx.ctl.signal?.aborted) throw err;
      for (let left = k; left < samples.length; left++) unproven.push("the run was interrupted before it was compared");
      break;
    }
    // Each sample is two flushes and three requests, seconds on a real server: say how far the check has come.
    log.info(`Cache-fidelity check: sample ${k + 1}/${samples.length} done (${((performance.now() - startedMs) / 1000).toFixed(1)} s)`);
  }
  const s = ((performance.now() - startedMs) / 1000).toFixed(1);
  log.info(`Cache-fidelity check: ${comparisons.length} compared, ${unproven.length} not, in ${s} s`);
  return fidelityGroup(comparisons, unproven);
}
