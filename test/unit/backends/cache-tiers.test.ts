/** Per-tier cached tokens (SGLang HiCache `cached_tokens_details`) read on the hot path, without a full parse. */
import { describe, expect, test } from "bun:test";
import { createSglangEventFields, scanSglangEvent } from "../../../src/backends/sglang-events.ts";
import { createEventFields } from "../../../src/backends/types.ts";
import { scanOpenaiEvent } from "../../../src/backends/openai-events.ts";

const encoder = new TextEncoder();
const meta = (tail: string) =>
  `{"text":" the cat","output_ids":[1,2],"meta_info":{"id":"r","finish_reason":null,"prompt_tokens":900,"weight_version":"default",` +
  `"completion_tokens":2,"cached_tokens":640${tail},"response_sent_to_client_ts":1.5}}`;

function tiers(json: string) {
  const f = createSglangEventFields();
  const kind = scanSglangEvent(encoder.encode(json), f);
  return { kind, cached: f.cachedTokens, device: f.cachedDeviceTokens, host: f.cachedHostTokens, storage: f.cachedStorageTokens };
}

describe("scanSglangEvent: cached_tokens_details", () => {
  test("device and host, as SGLang >= 0.5.9 reports them", () => {
    expect(tiers(meta(`,"cached_tokens_details":{"device":512,"host":128}`))).toEqual({ kind: "tokens", cached: 640, device: 512, host: 128, storage: 0 });
  });
  test("with an L3 storage backend", () => {
    const t = tiers(meta(`,"cached_tokens_details":{"device":0,"host":128,"storage":512,"storage_backend":"HiCacheFile"}`));
    expect(t).toEqual({ kind: "tokens", cached: 640, device: 0, host: 128, storage: 512 });
  });
  test("null: reported, nothing cached in any tier", () => {
    expect(tiers(meta(`,"cached_tokens_details":null`))).toMatchObject({ device: 0, host: 0, storage: 0 });
  });
  test("absent (older servers): unknown", () => {
    expect(tiers(meta(""))).toMatchObject({ cached: 640, device: -1, host: -1, storage: -1 });
  });
  test("a text that spells the key is not mistaken for it", () => {
    const json = `{"text":"\\"cached_tokens_details\\":{\\"host\\":9}","output_ids":[1],"meta_info":{"id":"r","finish_reason":null,"completion_tokens":1,"cached_tokens":4}}`;
    expect(tiers(json)).toMatchObject({ cached: 4, device: -1, host: -1 });
  });
  test("the final event (fully parsed) reads them too", () => {
    const json = `{"text":"x","meta_info":{"id":"r","finish_reason":{"type":"length","length":2},"completion_tokens":2,"cached_tokens":64,"cached_tokens_details":{"device":32,"host":32}}}`;
    expect(tiers(json)).toMatchObject({ kind: "tokens", cached: 64, device: 32, host: 32, storage: 0 });
  });
});

describe("scanOpenaiEvent: SGLang's sglext.cached_tokens_details", () => {
  test("read when present, unknown otherwise", () => {
    const f = createEventFields();
    const withDetails = `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}},"sglext":{"cached_tokens_details":{"device":4,"host":4}}}`;
    scanOpenaiEvent(encoder.encode(withDetails), f);
    expect([f.cachedTokens, f.cachedDeviceTokens, f.cachedHostTokens, f.cachedStorageTokens]).toEqual([8, 4, 4, 0]);
    scanOpenaiEvent(encoder.encode(`{"choices":[{"text":"a"}],"usage":{"completion_tokens":3}}`), f);
    expect([f.cachedDeviceTokens, f.cachedHostTokens]).toEqual([-1, -1]);
  });
});

describe("tiersKnown", () => {
  test("once the caller has a request's tiers the scanner skips them (they are constant over the stream)", () => {
    const f = createSglangEventFields();
    f.tiersKnown = true;
    scanSglangEvent(encoder.encode(meta(`,"cached_tokens_details":{"device":512,"host":128}`)), f);
    expect([f.cachedTokens, f.cachedDeviceTokens, f.cachedHostTokens]).toEqual([640, -1, -1]);
    expect(f.tiersKnown).toBe(true);
  });
});
