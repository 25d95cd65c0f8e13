/**
 * `warmbench replay` against a real llama.cpp llama-server (built by test/engines/llamacpp/build.sh; skipped outside
 * CI when missing, a failure under CI=true): a small Mooncake-format trace of one conversation on a shared system
 * prompt, each turn extending the last (a partial block continued), replayed one request at a time with strict
 * verification: every request's cached tokens are exactly what its prediction says. One slot holds the last prompt
 * only, and here the longest prefix any earlier request shares is always the last one's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { generateTrace, traceText } from "../helpers/mooncake-trace.ts";
import { readJsonl } from "../helpers/results.ts";
import { runCli } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-replay-"));
const B = 64;
const lines = generateTrace({
  blockSize: B,
  systems: 1,
  systemBlocks: 4,
  conversations: 1,
  turns: 6,
  maxTurnTokens: 150,
  turnGapMs: 300,
  startGapMs: 100,
  outputLength: 2,
  seed: 9,
});
const trace = join(dir, "trace.jsonl");
writeFileSync(trace, traceText(lines));

describe.skipIf(skip)("replay against llama.cpp (1 slot)", () => {
  let server: LlamaServer | undefined;
  beforeAll(async () => {
    server = await startLlamaServer({ ctxTokensPerSlot: 2048 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("every request finds exactly its predicted prefix under --verify-cache strict", async () => {
    const out = join(dir, "o.jsonl");
    const details = join(dir, "d.jsonl");
    const r = await runCli(
      [
        "replay",
        trace,
        "--block-size",
        String(B),
        "--model",
        llamaBuild().tokenizer,
        "--base-url",
        server!.url,
        "--settle",
        "0",
        "--verify-cache",
        "strict",
        "--ignore-timestamps",
        "--max-concurrency",
        "1",
        "--output-file",
        out,
        "--request-details",
        details,
      ],
      { timeoutMs: 300_000 },
    );
    if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server!.log().slice(-3000)}`);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("Engine: llama.cpp (detected: GET /props lists ");
    expect(existsSync(details)).toBe(true);
    const d = readJsonl(details);
    expect(d).toHaveLength(lines.length);
    d.forEach((q, i) => {
      expect(q.prompt_len).toBe(lines[i]!.input_length);
      expect(q.expected_cached_tokens_lower).toBe(q.expected_cached_tokens_upper);
      expect(q.cached_tokens).toBe(q.expected_cached_tokens_lower);
      // Turn i > 0 extends turn i-1: its whole prompt is cached.
      expect(q.cached_tokens).toBe(i === 0 ? 0 : lines[i - 1]!.input_length);
    });
    const whole = readJsonl(out).at(-1)!;
    expect(whole.cache_check).toBe("ok");
    expect(whole.flush_verified).toBe(true);
    expect(whole.backend).toBe("llamacpp");
  });
});
