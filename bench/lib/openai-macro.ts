/**
 * Macro measurement of OpenAI streams: whole requests through fetch, in this process, against a `warmbench mock`'s
 * /v1/completions with usage on every chunk (as warmbench asks: continuous_usage_stats). The current
 * streamRequest (src/client/stream.ts) and the baseline copy (bench/lib/baseline-stream.ts, with the baseline
 * scanner) run the same requests, alternated round by round; the client CPU is this process's own (the mock is
 * another process), from the first request sent to the last text decoded.
 */
import { join } from "node:path";
import { buildBody } from "../../src/backends/body.ts";
import { createOpenaiBodyTemplate, openaiBackend } from "../../src/backends/openai.ts";
import type { Backend } from "../../src/backends/types.ts";
import { resolveGeneratedText } from "../../src/client/stream-events.ts";
import { streamRequest } from "../../src/client/stream.ts";
import type { StreamRequest } from "../../src/client/stream-request.ts";
import { baselineExtractOpenaiText, baselineScanOpenaiEvent } from "./baseline-openai-events.ts";
import { baselineResolveGeneratedText, baselineStreamRequest } from "./baseline-stream.ts";
import { startMock } from "./procs.ts";
import { percentile } from "./stats.ts";
import type { BenchContext } from "./trial.ts";

const encoder = new TextEncoder();

/** The OpenAI backend as it was: JSON.parse of every chunk, and of every kept payload for the text. */
const baselineBackend: Backend = { ...openaiBackend, scanEvent: baselineScanOpenaiEvent, extractText: baselineExtractOpenaiText };

/** Before and after over the same requests. */
export interface MacroComparison {
  streams: number;
  outputLen: number;
  itlMs: number;
  /** Client CPU µs per token event, median over rounds, and every round. */
  beforeUsPerEvent: number;
  afterUsPerEvent: number;
  beforeRoundsUs: number[];
  afterRoundsUs: number[];
  /** Bytes a record holds for its text when its stream has ended (before the text is decoded), per request. */
  beforeRetainedBytes: number;
  afterRetainedBytes: number;
  /** Requests that failed, over every round (must be 0). */
  failed: number;
  /** Both sides produced the same texts, of the right token counts. */
  sameText: boolean;
}

interface RoundResult {
  cpuUs: number;
  events: number;
  retainedBytes: number;
  failed: number;
  texts: string[];
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Runs `rounds` rounds of `streams` concurrent requests per side, after one untimed round of each. */
export async function compareMacro(ctx: BenchContext, streams: number, outputLen: number, itlMs: number, rounds: number): Promise<MacroComparison> {
  const mock = await startMock(ctx.bin, join(ctx.workDir, "openai-cpu-truth.jsonl"), [
    "--itl-ms",
    String(itlMs),
    "--ttft-base-ms",
    "5",
    "--prefill-us-per-token",
    "0",
    "--max-running",
    String(streams + 8),
  ]);
  try {
    const url = `${mock.url}/v1/completions`;
    const template = createOpenaiBodyTemplate({ maxNewTokens: outputLen, ignoreEos: true, extra: {}, model: null });
    const prefix = encoder.encode(Array.from({ length: 16 }, (_, k) => 1000 + k).join(","));
    const request = (i: number) =>
      ({
        url,
        body: buildBody(template, prefix, encoder.encode(String(2000 + i))),
        index: i,
        promptLen: 17,
        maxNewTokens: outputLen,
        textMode: "incremental",
        requestTimeoutMs: 120_000,
        stallTimeoutMs: 30_000,
        deferText: true,
      }) satisfies StreamRequest;

    const before = async (): Promise<RoundResult> => {
      Bun.gc(true);
      const t0 = cpuUs();
      const recs = await Promise.all(Array.from({ length: streams }, (_, i) => baselineStreamRequest({ ...request(i), backend: baselineBackend })));
      let retainedBytes = 0;
      for (const r of recs) for (const p of r.textPayloads ?? []) retainedBytes += p.length;
      for (const r of recs) baselineResolveGeneratedText(r, baselineBackend);
      Bun.gc(true);
      const spent = cpuUs() - t0;
      return roundOf(spent, recs, retainedBytes);
    };
    const after = async (): Promise<RoundResult> => {
      Bun.gc(true);
      const t0 = cpuUs();
      const recs = await Promise.all(Array.from({ length: streams }, (_, i) => streamRequest({ ...request(i), backend: openaiBackend })));
      let retainedBytes = 0;
      for (const r of recs) retainedBytes += r.textBytes?.length ?? 0;
      for (const r of recs) resolveGeneratedText(r);
      Bun.gc(true);
      const spent = cpuUs() - t0;
      return roundOf(spent, recs, retainedBytes);
    };

    await before();
    await after();
    const beforeRounds: RoundResult[] = [];
    const afterRounds: RoundResult[] = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        beforeRounds.push(await before());
        afterRounds.push(await after());
      } else {
        afterRounds.push(await after());
        beforeRounds.push(await before());
      }
    }
    const perEvent = (rs: RoundResult[]): number[] => rs.map((r) => r.cpuUs / r.events);
    const lastBefore = beforeRounds[beforeRounds.length - 1];
    const lastAfter = afterRounds[afterRounds.length - 1];
    return {
      streams,
      outputLen,
      itlMs,
      beforeUsPerEvent: percentile(perEvent(beforeRounds), 50),
      afterUsPerEvent: percentile(perEvent(afterRounds), 50),
      beforeRoundsUs: perEvent(beforeRounds),
      afterRoundsUs: perEvent(afterRounds),
      beforeRetainedBytes: lastBefore ? lastBefore.retainedBytes / streams : NaN,
      afterRetainedBytes: lastAfter ? lastAfter.retainedBytes / streams : NaN,
      failed: [...beforeRounds, ...afterRounds].reduce((n, r) => n + r.failed, 0),
      sameText: lastBefore !== undefined && lastAfter?.texts.every((t, i) => t.length > 0 && t === lastBefore.texts[i]) === true,
    };
  } finally {
    await mock.stop();
  }
}

function roundOf(cpu: number, recs: Array<{ ok: boolean; tokenEvents: number; outputLen: number; generatedText: string }>, retainedBytes: number): RoundResult {
  let events = 0;
  let failed = 0;
  for (const r of recs) {
    events += r.tokenEvents;
    if (!r.ok) failed++;
  }
  return { cpuUs: cpu, events, retainedBytes, failed, texts: recs.map((r) => r.generatedText) };
}
