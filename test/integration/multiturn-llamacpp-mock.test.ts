/**
 * `warmbench multiturn` against the mock's llama.cpp personality (one prompt cache per slot, token pages): the
 * conversations go through the native /completion with return_tokens, detected or named, so every answer joins the
 * history as the mock's own output ids, no turn is approximate, and --verify-cache strict passes with every turn
 * reporting its history minus the last output token. The sweep against the same server stays on /v1/completions.
 * (The real llama-server runs the same conversations in llamacpp-multiturn.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { outputTokenId } from "../../src/mock/output.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-mt-llama-"));
const SLOTS = 2;
const CLIENTS = SLOTS;
const ROUNDS = 3;
const SYSTEM = 32;
const TURN = 24;
const OUTPUT = 6;

const promptLen = (r: number): number => SYSTEM + TURN + r * (OUTPUT + TURN);
const expectedCached = (r: number): number => (r === 0 ? SYSTEM : promptLen(r - 1) + OUTPUT - 1);

for (const backend of ["auto", "llamacpp"]) {
  describe(`--backend ${backend} against the llama.cpp mock`, () => {
    test("native /completion: the history holds the server's ids, no turn approximate, strict verification passes", async () => {
      const server = await startMockServer(
        mockOptions({ port: 0, personality: "llamacpp", slots: SLOTS, ttftBaseMs: 1, prefillUsPerToken: 5, itlMs: 1, recordInputs: true }),
      );
      const out = join(dir, `rounds-${backend}.jsonl`);
      const details = join(dir, `turns-${backend}.jsonl`);
      try {
        const r = await runCli([
          "multiturn",
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          server.url,
          "--backend",
          backend,
          "--num-clients",
          String(CLIENTS),
          "--num-rounds",
          String(ROUNDS),
          "--shared-system-tokens",
          String(SYSTEM),
          "--first-turn-tokens",
          String(TURN),
          "--turn-tokens",
          String(TURN),
          "--output-len",
          String(OUTPUT),
          "--max-concurrency",
          String(CLIENTS),
          "--round-barrier",
          "--settle",
          "0",
          "--verify-cache",
          "strict",
          "--output-file",
          out,
          "--request-details",
          details,
        ]);
        if (r.code !== 0) console.error(r.stderr);
        expect(r.code).toBe(0);
        expect(r.stderr).not.toContain("re-tokenize");
        const rounds = readJsonl(out);
        expect(rounds[0].run.engine.endpoint).toBe("/completion");
        for (const [k, l] of rounds.entries()) {
          expect(schemaProblems(l)).toEqual([]);
          expect(l).toMatchObject({ completed: CLIENTS, approximate_turns: 0, cache_check: "ok", flush_verified: true, warm_cached_tokens: 0 });
          expect(l.observed_cached_tokens).toBe(CLIENTS * expectedCached(k));
        }
        // Every turn judged by the cache model, exactly: the server named each turn's slot (the final event's id_slot),
        // so what that slot held is known, not guessed.
        for (const t of readJsonl(details)) {
          expect(t.cached_tokens).toBe(expectedCached(t.round));
          expect([t.expected_cached_tokens_lower, t.expected_cached_tokens_upper]).toEqual([expectedCached(t.round), expectedCached(t.round)]);
        }
        // On the wire: every later turn carries the mock's output ids right after the previous prompt.
        const stats = server.stats();
        const measured = stats.received.filter((q) => q.maxNewTokens === OUTPUT).map((q) => q.inputIds);
        expect(measured).toHaveLength(CLIENTS * ROUNDS);
        const answer = Array.from({ length: OUTPUT }, (_, i) => outputTokenId(i, mockOptions().vocabSize));
        for (const ids of measured.filter((ids) => ids.length > promptLen(0))) {
          const r0 = (ids.length - promptLen(0)) / (OUTPUT + TURN);
          expect(ids.slice(promptLen(r0 - 1), promptLen(r0 - 1) + OUTPUT)).toEqual(answer);
        }
        // The system prompt was warmed into each slot (pinned), as the sweep warms its prefixes.
        expect(
          stats.received
            .filter((q) => q.maxNewTokens === 1 && q.inputIds.length === SYSTEM)
            .map((q) => q.idSlot)
            .sort(),
        ).toEqual([0, 1]);
      } finally {
        await server.stop();
      }
    });
  });
}

test("the sweep against the same mock keeps /v1/completions", async () => {
  const server = await startMockServer(mockOptions({ port: 0, personality: "llamacpp", slots: 1, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1 }));
  const out = join(dir, "sweep.jsonl");
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--num-prompts",
      "2",
      "--total-tokens",
      "64",
      "--output-len",
      "2",
      "--pcts",
      "50",
      "--settle",
      "0",
      "--output-file",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(readJsonl(out)[0].run.engine.endpoint).toBe("/v1/completions");
    expect(server.stats().completionsRequests).toBeGreaterThan(0);
  } finally {
    await server.stop();
  }
});

test("more conversations than slots: warned before round 0, and the eviction it predicts shows in later rounds", async () => {
  const server = await startMockServer(mockOptions({ port: 0, personality: "llamacpp", slots: SLOTS, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1 }));
  const out = join(dir, "over-slots.jsonl");
  try {
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--num-clients",
      String(2 * SLOTS),
      "--num-rounds",
      "2",
      "--shared-system-tokens",
      String(SYSTEM),
      "--turn-tokens",
      String(TURN),
      "--output-len",
      String(OUTPUT),
      "--settle",
      "0",
      "--output-file",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${2 * SLOTS} conversations share ${SLOTS} cache slot(s): they evict each other's history between turns`);
    const rounds = readJsonl(out);
    expect(rounds[1].observed_cached_tokens).toBeLessThan(rounds[1].expected_cached_tokens);
  } finally {
    await server.stop();
  }
});

test("no more conversations than slots: no such warning", async () => {
  const server = await startMockServer(mockOptions({ port: 0, personality: "llamacpp", slots: SLOTS, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1 }));
  try {
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--num-clients",
      String(SLOTS),
      "--num-rounds",
      "1",
      "--shared-system-tokens",
      String(SYSTEM),
      "--turn-tokens",
      String(TURN),
      "--output-len",
      String(OUTPUT),
      "--settle",
      "0",
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("cache slot(s): they evict");
  } finally {
    await server.stop();
  }
});
