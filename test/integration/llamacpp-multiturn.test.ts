/**
 * `warmbench multiturn` against a real llama.cpp llama-server (test/engines/llamacpp/build.sh; skipped outside CI
 * when missing, a failure under CI=true). Detected as llama.cpp, the conversations go through the native /completion
 * with return_tokens, so every answer joins the history as the ids the server generated: no turn is approximate and
 * --verify-cache strict passes with each turn reporting exactly its history minus the last generated token (llama.cpp
 * never stores that one), which it can only do when the history we sent is the server's own, token for token. A
 * token llama.cpp holds back (its text ends inside a UTF-8 character) never has its id streamed: forced with a
 * logit bias, such answers are caught as short and the turns flagged approximate, never sent as exact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { readJsonl } from "../helpers/results.ts";
import { runCli, type CliResult } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-mt-"));
let fileNo = 0;

const SLOTS = 2;
/** One conversation per slot: llama.cpp keeps one prompt per slot, so more clients would evict each other. */
const CLIENTS = SLOTS;
const ROUNDS = 4;
const SYSTEM = 128;
const FIRST = 48;
const TURN = 32;
const OUTPUT = 8;

interface Run extends CliResult {
  rounds: any[];
  turns: any[];
}

async function multiturn(server: LlamaServer, args: string[]): Promise<Run> {
  const n = ++fileNo;
  const out = join(dir, `rounds-${n}.jsonl`);
  const details = join(dir, `turns-${n}.jsonl`);
  const r = await runCli(
    [
      "multiturn",
      "--model",
      llamaBuild().tokenizer,
      "--base-url",
      server.url,
      "--num-clients",
      String(CLIENTS),
      "--num-rounds",
      String(ROUNDS),
      "--shared-system-tokens",
      String(SYSTEM),
      "--first-turn-tokens",
      String(FIRST),
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
      ...args,
    ],
    { timeoutMs: 300_000 },
  );
  if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server.log().slice(-3000)}`);
  return { ...r, rounds: readJsonl(out), turns: readJsonl(details) };
}

/** Round r's prompt: the system prompt, the first turn, then per earlier round an answer and a turn. */
const promptLen = (r: number): number => SYSTEM + FIRST + r * (OUTPUT + TURN);
/** Round 0 finds the warmed system prompt; later rounds the previous prompt and its answer but the last token. */
const expectedCached = (r: number): number => (r === 0 ? SYSTEM : promptLen(r - 1) + OUTPUT - 1);

describe.skipIf(skip)(`real llama-server, ${SLOTS} slots: multiturn`, () => {
  let server: LlamaServer | undefined;
  beforeAll(async () => {
    server = await startLlamaServer({ slots: SLOTS, ctxTokensPerSlot: 1024 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("exact ids from /completion: no approximate turn, strict verification passes, every turn caches its whole history", async () => {
    const r = await multiturn(server!, []);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("requests go to /completion");
    expect(r.stderr).not.toContain("re-tokenize");
    expect(r.rounds.map((l) => l.round)).toEqual([0, 1, 2, 3]);
    expect(r.rounds[0].run.engine).toMatchObject({ name: "llama.cpp", source: "detected", endpoint: "/completion" });
    for (const [k, l] of r.rounds.entries()) {
      expect(l.completed).toBe(CLIENTS);
      expect(l.failed).toBe(0);
      expect(l.approximate_turns).toBe(0);
      expect(l.cache_check).toBe("ok");
      expect(l.mean_prompt_len).toBe(promptLen(k));
      expect(l.expected_cached_tokens).toBe(CLIENTS * expectedCached(k));
      expect(l.observed_cached_tokens).toBe(l.expected_cached_tokens);
      expect(l.flush_verified).toBe(true);
      expect(l.warm_cached_tokens).toBe(0);
    }
    expect(r.turns).toHaveLength(CLIENTS * ROUNDS);
    for (const t of r.turns) {
      expect(t.output_len).toBe(OUTPUT);
      expect(t.cached_tokens).toBe(expectedCached(t.round));
      // Judged by the cache model, per slot: llama.cpp named each turn's slot (id_slot), so the range is exact.
      expect([t.expected_cached_tokens_lower, t.expected_cached_tokens_upper]).toEqual([expectedCached(t.round), expectedCached(t.round)]);
    }
    expect(r.stdout).toContain("Observed hits: as expected in every round");
  });

  test("answers whose ids llama.cpp never streams (held-back UTF-8 lead bytes) are caught: their turns are approximate", async () => {
    // Token "Ã" is the lone byte 0xC3, the start of a 2-byte character: biased to always win, no answer's text ever
    // completes, so llama.cpp streams none of its ids (and no text either).
    const vocab = JSON.parse(readFileSync(llamaBuild().tokenizer, "utf8")).model.vocab as Record<string, number>;
    // biome-ignore lint/complexity/useLiteralKeys: a token's text, looked up in the vocabulary, not a property name
    const lead = vocab["Ã"];
    expect(lead).toBeNumber();
    const r = await multiturn(server!, ["--extra-request-body", JSON.stringify({ logit_bias: [[lead, 100]] })]);
    expect(r.code).toBe(0);
    expect(r.rounds.map((l) => l.approximate_turns)).toEqual([0, CLIENTS, CLIENTS, CLIENTS]);
    // The server did generate every token; the answers just never reached the history.
    for (const t of r.turns) expect(t.output_len).toBe(OUTPUT);
    // Without the answer, each turn extends the previous prompt alone: that much is cached, as the approximate check allows.
    for (const t of r.turns.filter((t) => t.round > 0)) expect(t.cached_tokens).toBe(SYSTEM + FIRST + (t.round - 1) * TURN);
    expect(r.rounds.every((l) => l.cache_check === "ok")).toBe(true);
  });
});
