/**
 * `warmbench passport` against the real llama.cpp server (the cached CPU build; skipped outside CI when missing, a
 * failure under CI=true): with -np 2 and -np 4 and 512 tokens a slot it must recover the slot count, each slot's
 * context, that every slot has a cache of its own, page size 1, that answers are cached, and what --cache-ram does
 * (off: an erased slot stays cold; on: the RAM cache restores it).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { runCli } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-passport-"));
const servers: LlamaServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe.skipIf(skip)("a passport of a real llama-server", () => {
  for (const [slots, cacheRam] of [
    [2, false],
    [4, true],
  ] as const) {
    test(`-np ${slots}, 512 tokens a slot, --cache-ram ${cacheRam ? "on" : "0"}`, async () => {
      const server = await startLlamaServer({ slots, ctxTokensPerSlot: 512, cacheRam });
      servers.push(server);
      const file = join(dir, `np${slots}.json`);
      const t0 = performance.now();
      const r = await runCli(["passport", "--model", llamaBuild().tokenizer, "--base-url", server.url, "--quiet", "--output-file", file], {
        timeoutMs: 300_000,
      });
      const wallS = (performance.now() - t0) / 1000;
      if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server.log().slice(-2000)}`);
      expect(r.code).toBe(0);
      const p = JSON.parse(readFileSync(file, "utf8"));
      console.log(`llama.cpp passport -np ${slots}: ${p.requests_sent} requests, ${wallS.toFixed(1)} s`);
      expect(p.slots.value).toEqual({ count: slots, context_tokens: 512, separate_caches: true, ram_cache_restores: cacheRam });
      expect(p.page_size_tokens.value).toBe(1);
      expect(p.capacity_tokens.value).toBe(512);
      expect(p.outputs_cached.value).toBe(true);
      expect(p.second_tier.value.present).toBe(cacheRam);
    }, 300_000);
  }
});
