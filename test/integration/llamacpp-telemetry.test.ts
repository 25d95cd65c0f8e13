/**
 * Server telemetry (--scrape-interval) against a real llama.cpp llama-server started with --metrics (built by
 * test/engines/llamacpp/build.sh; skipped outside CI when missing, a failure under CI=true), 4 slots as in
 * llamacpp-warmbench.test.ts: every line of a 0/50 sweep carries the server's series in the llamacpp dialect with at
 * least 90 % of the intended scrapes, and the counters llama.cpp exposes reconcile exactly with the client's records.
 * Those are prompt tokens and cached tokens: llama.cpp v0.5.0's `llamacpp:prompt_tokens_total` counts the prompt
 * tokens it computed ("excluding cached tokens"), `llamacpp:prompt_tokens_cached_total` the ones reused from the
 * slot, and the dialect adds the two; it has no finished-request counter, so no `requests` row. A server without
 * --metrics has no series at all (the line says so with nulls, the run still passes).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { readSweepLines } from "../helpers/results.ts";
import { runCli, type CliResult } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-telemetry-"));
let fileNo = 0;

/**
 * llamacpp-warmbench's slots and slot context. Short prompts: llama.cpp answers /metrics between two decode calls, so
 * a call must stay well under the 250 ms interval on 2 busy cores (four 1024-token prefills in one call do not);
 * 32 prompts of 16 tokens out at concurrency 4 keep each point over a second, several scrapes inside it.
 */
const TOTAL = 256;
const CTX_PER_SLOT = 2048;
const SLOTS = 4;
const PROMPTS = 32;
const OUTPUT = 16;
const PCTS = [0, 50];

interface Run extends CliResult {
  lines: any[];
}

async function sweep(server: LlamaServer, prompts = PROMPTS): Promise<Run> {
  const out = join(dir, `out-${++fileNo}.jsonl`);
  const r = await runCli(
    ["--model", llamaBuild().tokenizer, "--base-url", server.url, "--total-tokens", String(TOTAL), "--output-len", String(OUTPUT)]
      .concat(["--num-prompts", String(prompts), "--max-concurrency", String(SLOTS), "--pcts", PCTS.join(","), "--settle", "0"])
      .concat(["--seed", "5", "--scrape-interval", "250ms", "--output-file", out]),
    { timeoutMs: 300_000 },
  );
  if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server.log().slice(-3000)}`);
  return { ...r, lines: readSweepLines(out) };
}

function withServer(metrics: boolean): () => LlamaServer {
  let server: LlamaServer | undefined;
  if (skip) return () => server!;
  beforeAll(async () => {
    server = await startLlamaServer({ slots: SLOTS, ctxTokensPerSlot: CTX_PER_SLOT, metrics });
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}

const prefixOf = (pct: number): number => Math.floor((TOTAL * pct) / 100);

describe.skipIf(skip)("real llama-server with --metrics, 4 slots", () => {
  const server = withServer(true);

  test("0/50: the series in every line (≥ 90 % of the scrapes), prompt and cached tokens reconcile exactly", async () => {
    const r = await sweep(server());
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
    for (const line of r.lines) {
      expect([line.shared_prefix_pct, line.completed, line.failed]).toEqual([line.shared_prefix_pct, PROMPTS, 0]);
      const t = line.server_telemetry;
      expect(t.interval_ms).toBe(250);
      expect(t.replicas).toHaveLength(1);
      expect(t.scrapes_ok / t.scrapes_intended, `${t.scrapes_ok}/${t.scrapes_intended} scrapes`).toBeGreaterThanOrEqual(0.9);
      expect(t.buckets).toBe(line.timeline.buckets);
      const rep = t.replicas[0];
      expect(rep.url).toBe(server().url);
      expect(rep.dialect).toBe("llamacpp");
      expect(rep.running.length).toBeGreaterThanOrEqual(t.buckets);
      expect(line.evidence.samples.telemetry).toBe(t.scrapes_ok);
      // What llama.cpp exposes, and only that: no request counter, no KV usage gauge in this build.
      expect(line.server_reconciliation.map((x: any) => x.counter)).toEqual(["prompt_tokens", "cached_tokens"]);
      for (const row of line.server_reconciliation) {
        expect([row.counter, row.server]).toEqual([row.counter, row.client]);
        expect(row.agrees).toBe(true);
      }
      expect(line.server_counters_disagree).toBe(0);
      const byCounter = Object.fromEntries(line.server_reconciliation.map((x: any) => [x.counter, x.server]));
      expect(byCounter.prompt_tokens).toBe(PROMPTS * TOTAL);
      // Every slot was warmed with the prefix (llamacpp-warmbench asserts the exact hit per request).
      expect(byCounter.cached_tokens).toBe(PROMPTS * prefixOf(line.shared_prefix_pct));
      expect(line.server_kv_usage_peak).toBeNull();
      expect(line.server_preemptions_per_request).toBeNull();
      expect(line.server_queue_mean).toBeGreaterThanOrEqual(0);
    }
    expect(r.stderr).not.toContain("server_counters_disagree");
  }, 300_000);
});

describe.skipIf(skip)("real llama-server without --metrics", () => {
  const server = withServer(false);

  test("no series and no reconciliation in the line; the run passes", async () => {
    const r = await sweep(server(), 8);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toHaveLength(PCTS.length);
    for (const line of r.lines) {
      expect(line.completed).toBe(8);
      expect(line.server_telemetry ?? null).toBeNull();
      expect(line.server_reconciliation ?? null).toBeNull();
      expect(line.server_counters_disagree ?? null).toBeNull();
    }
  }, 300_000);
});
