/** The llamacpp backend against the mock's llama.cpp personality: preflight, slot erase, the RAM-cache check, bodies. */
import { afterEach, describe, expect, test } from "bun:test";
import { buildBody } from "../../../src/backends/body.ts";
import { backendFor } from "../../../src/backends/index.ts";
import { checkIds, findRamCache } from "../../../src/backends/llamacpp-ram-cache.ts";
import { cachedTokensOf, eraseSlot, listSlotIds, shortCompletion } from "../../../src/backends/llamacpp-slots.ts";
import { mockOptions, type MockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";
import { startSequenceServer, type TestServer } from "../../helpers/stream-servers.ts";

const mocks: MockServer[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) s.stop();
  await Promise.all(mocks.splice(0).map((m) => m.stop()));
});

async function llama(overrides: Partial<MockOptions> = {}): Promise<MockServer> {
  const m = await startMockServer(
    mockOptions({ port: 0, personality: "llamacpp", ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, recordInputs: true, ...overrides }),
  );
  mocks.push(m);
  return m;
}

const ctl = (baseUrl: string) => ({ baseUrl, headers: {} });
const backend = backendFor("llamacpp");
const decoder = new TextDecoder();
const encoder = new TextEncoder();

describe("preflight", () => {
  test("slots, token-granular pages, the model, the context per slot; no check asked, none sent", async () => {
    const m = await llama({ slots: 3, contextLength: 3000 });
    const profile = await backend.preflight(ctl(m.url), { pageSize: null, servedModelName: null });
    expect(profile).toMatchObject({
      model: "mock-model",
      pageSize: 1,
      pageSizeSource: "backend default",
      textMode: "incremental",
      cacheSlots: 3,
      maxRunning: 3,
      flushGap: null,
      warnings: [],
      engine: { name: "llama.cpp", evidence: "/props: 3 slots, build b1-mock" },
    });
    expect(profile.info).toMatchObject({ source: "/props", version: "b1-mock", contextLength: 1000 });
    expect(m.stats().completionsRequests).toBe(0);
  });

  test("not llama.cpp (no /props): a clear error", async () => {
    const m = await startMockServer(mockOptions({ port: 0 }));
    mocks.push(m);
    await expect(backend.preflight(ctl(m.url), { pageSize: null, servedModelName: null })).rejects.toThrow(
      "/props did not answer: this does not look like llama.cpp's llama-server",
    );
  });

  test("the host-RAM prompt cache is found by behaviour and becomes the flush's gap", async () => {
    const on = await llama({ slots: 2, cacheRam: true });
    const profile = await backend.preflight(ctl(on.url), { pageSize: null, servedModelName: null, checkFlush: true });
    expect(profile.flushGap).toBe(
      "after every slot was erased, a prompt the server had seen came back with 63 of 64 tokens cached: its host-RAM prompt cache " +
        "(--cache-ram, 8192 MiB by default) keeps prompts that an erase does not reach; start llama-server with --cache-ram 0",
    );
    expect(profile.warnings).toEqual([`llama.cpp: ${profile.flushGap}`]);
    // Three one-token requests: X and Y pinned to slot 0, then X unpinned.
    const sent = on.stats().received;
    expect(sent.map((r) => [r.inputIds.length, r.maxNewTokens, r.idSlot])).toEqual([
      [64, 1, 0],
      [64, 1, 0],
      [64, 1, null],
    ]);
    expect(sent[2]!.inputIds).toEqual(sent[0]!.inputIds);
    expect(sent.map((r) => r.cachedTokens)).toEqual([0, 0, 63]);

    const off = await llama({ slots: 2 });
    expect((await backend.preflight(ctl(off.url), { pageSize: null, servedModelName: null, checkFlush: true })).flushGap).toBeNull();
  });

  test("the check leaves every slot empty", async () => {
    const m = await llama({ slots: 2, cacheRam: true });
    expect(await findRamCache(ctl(m.url), null, 32000)).not.toBeNull();
    expect(m.stats().cacheTokens).toBe(0); // tokens held in the slots (RAM aside)
  });

  test("check ids: 64 ordinary tokens from the middle of the vocabulary, different per seed", () => {
    const a = checkIds(128256, 1);
    const b = checkIds(128256, 2);
    expect(a).toHaveLength(64);
    expect(a.every((id) => id >= 32064 && id < 96192)).toBe(true);
    expect(a[0]).not.toBe(b[0]);
  });
});

describe("flush: erase every slot", () => {
  test("GET /slots lists them, each is erased; what was cached is gone", async () => {
    const m = await llama({ slots: 4 });
    const ids = Array.from({ length: 40 }, (_, i) => 1000 + i);
    for (let slot = 0; slot < 4; slot++) await shortCompletion(ctl(m.url), { ids, model: null, slot });
    expect(await shortCompletion(ctl(m.url), { ids, model: null, slot: 2 })).toBe(39);
    expect(await listSlotIds(ctl(m.url))).toEqual([0, 1, 2, 3]);
    expect(await backend.flush(ctl(m.url), { deadlineS: 5, serverTimeoutS: 1 })).toEqual({ attempts: 1 });
    expect(m.stats().flushes).toBe(4);
    for (let slot = 0; slot < 4; slot++) expect(await shortCompletion(ctl(m.url), { ids, model: null, slot })).toBe(0);
  });

  test("501 (no --slot-save-path) names the flag", async () => {
    const m = await llama({ noSlotSavePath: true });
    await expect(backend.flush(ctl(m.url), { deadlineS: 5, serverTimeoutS: 1 })).rejects.toThrow(
      "POST /slots/0?action=erase answered 501: llama-server answers slot actions only when started with --slot-save-path DIR",
    );
  });

  test("without GET /slots (--no-slots), the ids come from /props total_slots", async () => {
    const server = startSequenceServer([
      { status: 501, body: '{"error":{"code":501,"message":"This server does not support slots endpoint."}}' },
      { status: 200, body: '{"total_slots":2}' },
    ]);
    servers.push(server);
    expect(await listSlotIds(ctl(server.url))).toEqual([0, 1]);
  });

  test("an erase answers how many tokens it dropped", async () => {
    const m = await llama({ slots: 1 });
    await shortCompletion(ctl(m.url), { ids: [5, 6, 7, 8], model: null, slot: 0 });
    expect(await eraseSlot(ctl(m.url), 0)).toBe(4);
    expect(await eraseSlot(ctl(m.url), 0)).toBe(0);
  });
});

describe("bodies and cached tokens", () => {
  test("cache_prompt always; id_slot only when pinned", () => {
    const body = (slot: number | null | undefined) =>
      JSON.parse(
        decoder.decode(
          buildBody(backend.createBodyTemplate({ maxNewTokens: 3, ignoreEos: true, extra: {}, model: "m", slot }), encoder.encode("1,2"), encoder.encode("3")),
        ),
      );
    expect(body(undefined)).toEqual({
      model: "m",
      prompt: [1, 2, 3],
      max_tokens: 3,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      ignore_eos: true,
      cache_prompt: true,
    });
    expect(body(2)).toMatchObject({ cache_prompt: true, id_slot: 2 });
    expect(body(null).id_slot).toBeUndefined();
  });

  test("cachedTokensOf: usage first, timings.cache_n otherwise", () => {
    expect(cachedTokensOf({ usage: { prompt_tokens_details: { cached_tokens: 5 } }, timings: { cache_n: 9 } })).toBe(5);
    expect(cachedTokensOf({ usage: {}, timings: { cache_n: 9 } })).toBe(9);
    expect(cachedTokensOf({})).toBe(-1);
  });
});
