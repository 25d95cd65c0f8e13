/**
 * OpenAI streams: client CPU per token event and the bytes kept per request for the text, before (JSON.parse of
 * every chunk, every token payload kept until the stream ends and parsed again for its text) and after (byte
 * readers, escaped text bytes), side by side in one run. The micro part is the changed per-event work alone, on
 * synthetic vLLM chunks; the macro part is whole requests through fetch against the mock, in this process.
 */
import { compareMacro } from "../lib/openai-macro.ts";
import { compareMicro } from "../lib/openai-micro.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const ratio = (after: number, before: number): string => fmt(after / before, 2);

/** Runs the micro comparison at two read sizes and the macro one. */
export async function runOpenaiCpu(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const micro = ctx.quick ? { streams: 64, outputLen: 50, rounds: 3 } : { streams: 256, outputLen: 200, rounds: 7 };
  const macro = ctx.quick ? { streams: 32, outputLen: 50, itlMs: 10, rounds: 1 } : { streams: 128, outputLen: 200, itlMs: 10, rounds: 5 };

  const micros = [1, 16].map((eventsPerRead) => {
    progress(`openai-cpu: micro, ${micro.streams} streams x ${micro.outputLen} chunks, ${eventsPerRead} chunk(s) per read, ${micro.rounds} rounds`);
    const r = compareMicro(micro.streams, micro.outputLen, eventsPerRead, micro.rounds);
    progress(`  -> ${fmt(r.beforeUsPerEvent, 3)} -> ${fmt(r.afterUsPerEvent, 3)} µs/event`);
    return r;
  });
  progress(`openai-cpu: macro, ${macro.streams} streams x ${macro.outputLen} tokens through fetch (mock itl ${macro.itlMs} ms), ${macro.rounds} rounds`);
  const m = await compareMacro(ctx, macro.streams, macro.outputLen, macro.itlMs, macro.rounds);
  progress(`  -> ${fmt(m.beforeUsPerEvent, 2)} -> ${fmt(m.afterUsPerEvent, 2)} µs/event`);

  const rows = [
    ...micros.map((r) => [
      "micro (reading only)",
      `${r.streams} x ${r.outputLen}`,
      String(r.eventsPerRead),
      fmt(r.beforeUsPerEvent, 3),
      fmt(r.afterUsPerEvent, 3),
      ratio(r.afterUsPerEvent, r.beforeUsPerEvent),
      `${fmt(r.beforeRetainedBytes, 0)} -> ${fmt(r.afterRetainedBytes, 0)}`,
      fmt(r.beforePinnedBytes, 0),
      r.sameText ? "" : "TEXTS DIFFER",
    ]),
    [
      "macro (fetch + mock)",
      `${m.streams} x ${m.outputLen}`,
      "as received",
      fmt(m.beforeUsPerEvent, 2),
      fmt(m.afterUsPerEvent, 2),
      ratio(m.afterUsPerEvent, m.beforeUsPerEvent),
      `${fmt(m.beforeRetainedBytes, 0)} -> ${fmt(m.afterRetainedBytes, 0)}`,
      "-",
      [m.failed ? `${m.failed} failed requests` : "", m.sameText ? "" : "TEXTS DIFFER"].filter((n) => n !== "").join("; "),
    ],
  ];
  return {
    name: "openai-cpu",
    title: "OpenAI streams: client CPU per token event, before (JSON.parse per chunk, payloads kept) and after (byte readers, text bytes)",
    columns: [
      "measure",
      "streams x tokens",
      "chunks per read",
      "before µs/event",
      "after µs/event",
      "after / before",
      "text held per request at stream end, B (before -> after)",
      "network buffers pinned per request while streaming, B (before)",
      "note",
    ],
    rows,
    targets: [],
    notes: [
      "before = bench/lib/baseline-openai-events.ts and baseline-stream.ts (the code before this change, kept verbatim for the bench); after = src/. Both run in this process, alternated round by round (which goes first alternates too), after one untimed round of each; figures are medians over rounds of this process's CPU (user + system, every thread) per token event, each timed pass ending with a full GC so that each side pays for its own garbage.",
      `micro: synthetic vLLM chunks (continuous usage, ${fmt(micros[0]?.chunkBytes, 0)} bytes per event on average, ASCII and multi-byte text) through the real SSE splitter, each read in a buffer of its own; scan, text retention, end-of-stream copy and the text decoding after the run; no network, no timing.`,
      `macro: whole requests through fetch against \`warmbench mock\` /v1/completions (usage on every chunk), all ${m.streams} at once, deferred text resolved after the round as run-pct.ts does; fetch, the HTTP thread and promise work are the same on both sides, so the ratio is smaller than the micro one.`,
      "text held = what a record keeps for its text once its stream ended, until the pct's texts are decoded (before: a copy of every token payload; after: the escaped text bytes). Pinned = the network buffers the kept payload views held while the stream ran (before only).",
    ],
    trials: [],
    figures: {
      microBeforeUsPerEvent: micros[0]?.beforeUsPerEvent ?? null,
      microAfterUsPerEvent: micros[0]?.afterUsPerEvent ?? null,
      macroBeforeUsPerEvent: m.beforeUsPerEvent,
      macroAfterUsPerEvent: m.afterUsPerEvent,
    },
    details: { micro: micros, macro: m },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
