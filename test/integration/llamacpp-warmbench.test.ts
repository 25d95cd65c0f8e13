/**
 * warmbench against a real llama.cpp llama-server (built by test/engines/llamacpp/build.sh; skipped outside CI when
 * missing, a failure under CI=true), with 1 and with 4 slots: the engine is detected, a 0/50/90 sweep with the
 * default flush passes --verify-cache strict with every request reporting exactly the prefix as cached, which is
 * also exactly the range the cache model for slot servers gives each request from its details, TTFT falls
 * as the shared prefix grows, chat works as completions do, and a server left with its host-RAM prompt cache on is
 * caught. Small prompts, 2 output tokens: the tiny model keeps each sweep to seconds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer, type LlamaServerOptions } from "../helpers/llama-server.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";
import { runCli, type CliResult } from "../helpers/run-cli.ts";
import { sweepSlotRanges } from "../helpers/slot-model.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-"));
let fileNo = 0;

/** Tokens per prompt: enough prefill (~0.1 s cold on 2 cores) for the cache to show in TTFT, well inside a slot. */
const TOTAL = 1024;
const CTX_PER_SLOT = 2048;
const PCTS = [0, 50, 90];

interface Run extends CliResult {
  lines: any[];
}

async function sweep(server: LlamaServer, args: string[]): Promise<Run> {
  const out = join(dir, `out-${++fileNo}.jsonl`);
  const r = await runCli(
    [
      "--model",
      llamaBuild().tokenizer,
      "--base-url",
      server.url,
      "--total-tokens",
      String(TOTAL),
      "--output-len",
      "2",
      "--pcts",
      PCTS.join(","),
      "--settle",
      "0",
      "--verify-cache",
      "strict",
      "--output-file",
      out,
      ...args,
    ],
    { timeoutMs: 300_000 },
  );
  if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server.log().slice(-3000)}`);
  return { ...r, lines: readSweepLines(out) };
}

function withServer(options: Partial<LlamaServerOptions>): () => LlamaServer {
  let server: LlamaServer | undefined;
  if (skip) return () => server!;
  beforeAll(async () => {
    server = await startLlamaServer({ ctxTokensPerSlot: CTX_PER_SLOT, ...options });
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}

const prefixOf = (pct: number): number => Math.floor((TOTAL * pct) / 100);

/** What every sweep against a correctly started llama-server shows. */
function expectHealthySweep(r: Run, prompts: number, endpoint: string): void {
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("Engine: llama.cpp (detected: GET /props lists ");
  expect(r.lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
  const first = r.lines[0];
  expect(first.backend).toBe("llamacpp");
  expect(first.run.engine).toMatchObject({ name: "llama.cpp", source: "detected", endpoint, flush_gap: null });
  for (const l of r.lines) {
    expect(l.completed).toBe(prompts);
    expect(l.failed).toBe(0);
    expect(l.total_output).toBe(prompts * 2);
    expect(l.cache_check).toBe("ok");
    expect(l.flush_verified).toBe(true);
    expect(l.flush_probe_cached_tokens).toBe(0);
    expect(l.page_size).toBe(1);
  }
}

/**
 * Every request's cached tokens inside the slot cache model's range on its details' timings, and that range the
 * prefix exactly (every slot was warmed with it, and each prompt differs after it). Where the details carry the
 * engine's own range (expected_cached_tokens_lower/upper), it is the model's too.
 */
function expectModelled(detailsFile: string, slots: number): void {
  const details = readJsonl(detailsFile);
  const ranges = sweepSlotRanges(details, slots, prefixOf);
  expect(details.length).toBeGreaterThan(0);
  for (const d of details) {
    const [lo, hi] = ranges.get(d.request_id)!;
    const p = prefixOf(d.pct);
    expect([d.pct, d.index, lo, hi, d.cached_tokens]).toEqual([d.pct, d.index, p, p, p]);
    if (d.expected_cached_tokens_lower !== undefined) expect([d.expected_cached_tokens_lower, d.expected_cached_tokens_upper]).toEqual([lo, hi]);
  }
}

describe.skipIf(skip)("real llama-server, 1 slot", () => {
  const server = withServer({ slots: 1 });

  test("completions: 0/50/90 with the default flush passes strict verification; every request reports the prefix; TTFT falls", async () => {
    const details = join(dir, "details-1slot.jsonl");
    const r = await sweep(server(), ["--num-prompts", "3", "--max-concurrency", "1", "--request-details", details]);
    expectHealthySweep(r, 3, "/v1/completions");
    expect(r.lines[0].run.engine.cache_slots).toBe(1);
    // Token-granular: exactly the prefix, on every request.
    expect(r.lines.map((l) => l.cached_tokens_counts)).toEqual(PCTS.map((p) => [[prefixOf(p), 3]]));
    expect(r.lines.map((l) => l.expected_cached_tokens)).toEqual(PCTS.map(prefixOf));
    expectModelled(details, 1);
    // 1024 tokens computed at 0%, 512 at 50%, 103 at 90%. Other load on a shared machine only ever adds time, so
    // each pct's fastest request shows its prefill cost: compare those.
    const fastest = PCTS.map((p) =>
      Math.min(
        ...readJsonl(details)
          .filter((d) => d.pct === p)
          .map((d) => d.ttft_ms),
      ),
    );
    expect(fastest[1]!).toBeLessThan(fastest[0]!);
    expect(fastest[2]!).toBeLessThan(fastest[0]! * 0.6);
    expect(r.lines[2].ttft_model.prefill_us_per_token).toBeGreaterThan(0);
  });

  test("chat: text prompts through /v1/chat/completions pass strict verification too", async () => {
    const r = await sweep(server(), ["--endpoint", "chat", "--num-prompts", "3", "--max-concurrency", "1"]);
    expectHealthySweep(r, 3, "/v1/chat/completions");
    expect(r.lines.every((l) => l.prompt_encoding === "text")).toBe(true);
    // The fallback chatml template's head, shared by every prompt, is learned after the flush.
    expect(r.lines[0].prompt_drift.template_head_tokens).toBeGreaterThan(0);
    expect(r.lines[0].cached_tokens_counts).toEqual([[r.lines[0].prompt_drift.template_head_tokens, 3]]);
    expect(r.lines[2].mean_cached_tokens).toBeGreaterThan(prefixOf(90) * 0.9);
  });
});

describe.skipIf(skip)("real llama-server, 4 slots", () => {
  const server = withServer({ slots: 4, metrics: true });

  test("completions at concurrency 4: every slot warmed, every request hits, /metrics agrees", async () => {
    // Four at once on four slots: each lands on its own slot, so each slot must hold the prefix.
    const details = join(dir, "details-4slots.jsonl");
    const r = await sweep(server(), ["--num-prompts", "4", "--max-concurrency", "4", "--request-details", details]);
    expectHealthySweep(r, 4, "/v1/completions");
    expect(r.lines[0].run.engine).toMatchObject({ cache_slots: 4, max_running: 4 });
    expect(r.lines.map((l) => l.cached_tokens_counts)).toEqual(PCTS.map((p) => [[prefixOf(p), 4]]));
    // llamacpp:prompt_tokens_cached_total over all prompt tokens, around the measured requests only.
    expect(r.lines[2].server_cache_hit_rate).toBeCloseTo(prefixOf(90) / TOTAL, 6);
    expectModelled(details, 4);
  });

  test("chat at concurrency 4", async () => {
    const r = await sweep(server(), ["--endpoint", "chat", "--num-prompts", "4", "--max-concurrency", "4", "--pcts", "0,90"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => [l.cache_check, l.completed])).toEqual([
      ["ok", 4],
      ["ok", 4],
    ]);
  });

  test("more requests in flight than slots: explained, and they still hit", async () => {
    const details = join(dir, "details-queued.jsonl");
    const r = await sweep(server(), ["--num-prompts", "6", "--max-concurrency", "6", "--pcts", "90", "--request-details", details]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("--max-concurrency 6 is above the server's 4 slot(s)");
    expect(r.lines[0].cached_tokens_counts).toEqual([[prefixOf(90), 6]]);
    // Two wait for a slot that another prompt left: the model still brackets them exactly.
    expectModelled(details, 4);
  });
});

describe.skipIf(skip)("real llama-server with its host-RAM prompt cache on (llama.cpp's default)", () => {
  const server = withServer({ slots: 2, cacheRam: true });

  test("--verify-cache strict exits 4 and says to start it with --cache-ram 0", async () => {
    const r = await sweep(server(), ["--num-prompts", "2", "--max-concurrency", "2", "--pcts", "50"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("its host-RAM prompt cache (--cache-ram, 8192 MiB by default) keeps prompts that an erase does not reach");
    expect(r.stderr).toContain("start llama-server with --cache-ram 0");
    expect(r.lines[0].run.engine.flush_gap).toContain("--cache-ram 0");
    expect(r.lines[0]).toMatchObject({ flush_verified: false, cache_check: "mismatch" });
  });
});

describe.skipIf(skip)("real llama-server without --slot-save-path", () => {
  const server = withServer({ slots: 1, slotSavePath: false });

  test("exit 1 before any pct, naming the flag", async () => {
    const r = await sweep(server(), ["--num-prompts", "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 501: llama-server answers slot actions only when started with --slot-save-path DIR");
    expect(r.lines).toEqual([]);
  });
});
