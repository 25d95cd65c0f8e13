/** Shared helpers of the mock's HTTP tests: start servers (stopped after each test) and read raw SSE. */
import { afterEach, expect } from "bun:test";
import { mockOptions, type MockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";
import type { MockStats } from "../../../src/mock/types.ts";

const servers: MockServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** A fast mock on a free port; stopped after the test. */
export async function start(overrides: Partial<MockOptions> = {}): Promise<MockServer> {
  const server = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, ...overrides }));
  servers.push(server);
  return server;
}

/** POST a JSON body. */
export function post(server: MockServer, body: unknown, path = "/generate", headers: Record<string, string> = {}): Promise<Response> {
  return fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** A /generate body: `maxNewTokens` output tokens, streamed unless told otherwise. */
export function genBody(inputIds: number[], maxNewTokens: number, stream = true): Record<string, unknown> {
  return { input_ids: inputIds, sampling_params: { max_new_tokens: maxNewTokens, temperature: 0, ignore_eos: true }, stream };
}

/** Token ids start, start+1, ... */
export const ids = (n: number, start = 10): number[] => Array.from({ length: n }, (_, i) => start + i);

/** Every byte of a response body, and the error that cut it short (null when it ended cleanly). */
export async function readRaw(res: Response): Promise<{ bytes: Uint8Array; error: string | null }> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) chunks.push(chunk.value);
    return { bytes: Buffer.concat(chunks), error: null };
  } catch (err) {
    return { bytes: Buffer.concat(chunks), error: (err as Error).message };
  }
}

/** `data: ` payloads of an SSE body (UTF-8, lossy), checking the framing. */
export function payloadsOf(text: string): string[] {
  if (text === "") return [];
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((event) => {
      expect(event.startsWith("data: ")).toBe(true);
      return event.slice("data: ".length);
    });
}

/** The payloads of a whole streamed response that must end cleanly. */
export async function streamPayloads(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  const { bytes, error } = await readRaw(res);
  expect(error).toBeNull();
  return payloadsOf(new TextDecoder().decode(bytes));
}

/** Poll /mock/stats-like state until `ok` holds (or 2 s pass); returns the last stats. */
export async function waitForStats(server: MockServer, ok: (s: MockStats) => boolean): Promise<MockStats> {
  let s = server.stats();
  for (let i = 0; i < 200 && !ok(s); i++) {
    await Bun.sleep(10);
    s = server.stats();
  }
  return s;
}
