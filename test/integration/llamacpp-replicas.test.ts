/**
 * Routed replicas against two real llama.cpp servers (the cached build, 4 slots of 1024 tokens each: every conversation keeps a slot, wherever the router puts it): conversations
 * routed by the client (--route session), then behind a real router (Debian's nginx, provisioned by the test command,
 * hashing X-Session-Affinity consistently and naming its choice in X-Served-By). Every turn's cached tokens are checked
 * (--verify-cache strict), every answer is attributed to the server that gave it, a conversation kept on one
 * replica loses nothing to routing, and every turn's cached tokens lie in the range the cache model for slot servers
 * gives it on the replica that served it (from the details' timings; printed with its width).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { startNginxRouter, type NginxRouter } from "../helpers/nginx-router.ts";
import { readJsonl } from "../helpers/results.ts";
import { runCli } from "../helpers/run-cli.ts";
import { conversationSlotRanges } from "../helpers/slot-model.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-replicas-"));
let servers: LlamaServer[] = [];
let router: NginxRouter | null = null;
const SLOTS = 4;
const SYSTEM_TOKENS = 64;

beforeAll(async () => {
  if (skip) return;
  servers = await Promise.all([0, 1].map(() => startLlamaServer({ slots: SLOTS, ctxTokensPerSlot: 1024 })));
  router = await startNginxRouter(
    servers.map((s) => s.url),
    "X-Session-Affinity",
  );
}, 120_000);
afterAll(async () => {
  await router?.stop();
  for (const s of servers) await s.stop();
});

async function conversations(name: string, routing: string[]) {
  const out = join(dir, `${name}.jsonl`);
  const details = join(dir, `${name}-details.jsonl`);
  const r = await runCli(
    [
      "multiturn",
      "--model",
      llamaBuild().tokenizer,
      ...routing,
      "--num-clients",
      "4",
      "--num-rounds",
      "3",
      "--shared-system-tokens",
      String(SYSTEM_TOKENS),
      "--turn-tokens",
      "48",
      "--output-len",
      "4",
      "--settle",
      "0",
      "--verify-cache",
      "strict",
      "--output-file",
      out,
      "--request-details",
      details,
    ],
    { timeoutMs: 300_000 },
  );
  if (r.code !== 0) console.error(r.stderr);
  return { code: r.code, rounds: readJsonl(out, { validate: true }), details: readJsonl(details) };
}

/**
 * Each replica's turns through the slot cache model: every turn's truth in its range, the range at least the system
 * prompt every slot was warmed with and at most the history the plan expects. Returns the summed width's share.
 */
function expectModelled(details: readonly any[], replicaOf: (d: any) => number, label: string): number {
  let width = 0;
  let possible = 0;
  for (let r = 0; r < servers.length; r++) {
    const mine = details.filter((d) => replicaOf(d) === r);
    const ranges = conversationSlotRanges(mine, SLOTS, SYSTEM_TOKENS);
    for (const d of mine) {
      const [lo, hi] = ranges.get(d.request_id)!;
      expect([label, d.request_id, lo <= d.cached_tokens && d.cached_tokens <= hi]).toEqual([label, d.request_id, true]);
      expect([label, d.request_id, lo >= SYSTEM_TOKENS, hi]).toEqual([label, d.request_id, true, d.expected_cached_tokens]);
      width += hi - lo;
      possible += hi;
    }
  }
  const share = possible === 0 ? 0 : (100 * width) / possible;
  console.log(`${label}: slot model width ${share.toFixed(1)} % of summed possible over ${details.length} turns`);
  return share;
}

describe.skipIf(skip)("two real llama-servers as replicas", () => {
  test("client-routed by conversation: strict cache checks hold, no routing loss, every turn on its conversation's replica", async () => {
    const run = await conversations("client", ["--base-url", servers.map((s) => s.url).join(","), "--route", "session"]);
    expect(run.code).toBe(0);
    expect(run.rounds.map((l: any) => [l.route, l.cache_check, l.loss_routing_tokens])).toEqual(run.rounds.map(() => ["session", "ok", 0]));
    for (const c of [0, 1, 2, 3]) expect(new Set(run.details.filter((d: any) => d.client === c).map((d: any) => d.replica)).size).toBe(1);
    for (const d of run.details) expect(d.ledger.delivered).toBe(d.cached_tokens);
    expectModelled(run.details, (d) => d.replica, "client-routed");
  }, 300_000);

  test("behind nginx (consistent hash of X-Session-Affinity): every answer attributed by X-Served-By, strict cache checks hold", async () => {
    const run = await conversations("nginx", [
      "--base-url",
      router!.url,
      "--replicas",
      servers.map((s) => s.url).join(","),
      "--routing-key",
      "aiperf",
      "--replica-header",
      "X-Served-By",
    ]);
    expect(run.code).toBe(0);
    expect(run.rounds.map((l: any) => [l.route, l.cache_check, l.ledger_unattributed_requests, l.loss_routing_tokens])).toEqual(
      run.rounds.map(() => ["router", "ok", 0, 0]),
    );
    for (const d of run.details) expect(servers.map((s) => s.url)).toContain(d.replica_url);
    for (const c of [0, 1, 2, 3]) expect(new Set(run.details.filter((d: any) => d.client === c).map((d: any) => d.replica)).size).toBe(1);
    expectModelled(run.details, (d) => servers.findIndex((s) => s.url === d.replica_url), "behind nginx");
  }, 300_000);
});
