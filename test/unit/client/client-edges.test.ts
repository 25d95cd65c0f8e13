// Edges of the client's small modules that the mutation run (npm run mutants) found unguarded: Prometheus text with
// timestamps, NaN and look-alike names, llama.cpp's counters, request bodies at the join limit, a backlog longer than
// its first buffer, the epoch clock.
import { describe, expect, test } from "bun:test";
import { nowMs, toEpochMs } from "../../../src/client/clock.ts";
import { dispatch } from "../../../src/client/dispatcher.ts";
import { hitRateBetween, parseCacheCounters, sumMetric } from "../../../src/client/prometheus.ts";
import { fetchBody, JOIN_LIMIT_BYTES, ReleasingBody } from "../../../src/client/request-body.ts";
import { EscapedText } from "../../../src/client/text-bytes.ts";

describe("Prometheus text", () => {
  test("a sample is the name then a space or labels: longer names, NaN and comments do not count", () => {
    const text = [
      "# HELP a_total the a",
      "a_total 3",
      "a_total_created 1700000000",
      "a_totally 9",
      'a_total{x="1 2",y="}"} 4 1700000000000',
      "a_total NaN",
      "a_total 5 1700000000000",
    ].join("\n");
    expect(sumMetric(text, "a_total")).toBe(12);
    expect(sumMetric("a_total NaN\n", "a_total")).toBeNull();
  });

  test("llama.cpp counts computed prompt tokens apart from the cached ones", () => {
    const text = "llamacpp:prompt_tokens_total 70\nllamacpp:prompt_tokens_cached_total 30\n";
    expect(parseCacheCounters(text)).toEqual({ hitTokens: 30, queryTokens: 100, source: "llamacpp" });
    expect(parseCacheCounters("llamacpp:prompt_tokens_total 70\n")).toBeNull();
    expect(parseCacheCounters("llamacpp:prompt_tokens_cached_total 30\n")).toBeNull();
  });

  test("a hit rate needs the same source, new queries, and hits that did not go back", () => {
    const at = (hitTokens: number, queryTokens: number, source: "vllm" | "sglang" = "vllm") => ({ hitTokens, queryTokens, source });
    expect(hitRateBetween(at(0, 0), at(30, 100))).toBe(0.3);
    expect(hitRateBetween(at(0, 0, "sglang"), at(30, 100))).toBeNull();
    expect(hitRateBetween(at(10, 100), at(10, 100))).toBeNull();
    expect(hitRateBetween(at(50, 100), at(40, 200))).toBeNull();
    expect(hitRateBetween(at(50, 100), at(50, 200))).toBe(0);
  });
});

async function bytesOf(body: Uint8Array | ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return body instanceof Uint8Array ? body : new Uint8Array(await new Response(body).arrayBuffer());
}

describe("request bodies", () => {
  const filled = (n: number, v: number) => new Uint8Array(n).fill(v);

  test("a single buffer and a single part go out as they are", () => {
    const one = filled(10, 1);
    expect(fetchBody(one)).toEqual({ body: one });
    expect(fetchBody([one]).body).toBe(one);
  });

  test("parts up to the join limit are joined, past it streamed with a content-length", async () => {
    const half = JOIN_LIMIT_BYTES / 2;
    const atLimit = fetchBody([filled(half, 1), filled(half, 2)]);
    expect(atLimit.body).toBeInstanceOf(Uint8Array);
    expect(atLimit.headers).toBeUndefined();
    expect(await bytesOf(atLimit.body)).toEqual(new Uint8Array([...filled(half, 1), ...filled(half, 2)]));
    const over = fetchBody([filled(half, 1), filled(half + 1, 2)]);
    expect(over.body).toBeInstanceOf(ReadableStream);
    expect(over.headers).toEqual({ "content-length": String(JOIN_LIMIT_BYTES + 1) });
    expect(await bytesOf(over.body)).toEqual(new Uint8Array([...filled(half, 1), ...filled(half + 1, 2)]));
  });

  test("a releasing body at the limit is joined; empty parts are dropped; drained means done", async () => {
    let sent = 0;
    const body = new ReleasingBody([filled(JOIN_LIMIT_BYTES - 1, 1), new Uint8Array(0), filled(1, 2)], () => sent++);
    expect(body.length).toBe(JOIN_LIMIT_BYTES);
    const out = fetchBody(body);
    expect(out.body).toBeInstanceOf(Uint8Array);
    expect((out.body as Uint8Array).length).toBe(JOIN_LIMIT_BYTES);
    expect(sent).toBe(1);
    expect(body.done).toBe(true);
    expect(body.shift()).toBeNull();

    const parts = new ReleasingBody([filled(3, 1), new Uint8Array(0), filled(2, 2)], () => sent++);
    expect(parts.shift()).toEqual(filled(3, 1));
    expect(parts.done).toBe(false);
    expect(parts.shift()).toEqual(filled(2, 2));
    expect(parts.done).toBe(true);
    expect(sent).toBe(2);
  });
});

describe("EscapedText", () => {
  test("growing from a full first buffer keeps every byte, over many appends", () => {
    const text = new EscapedText(1);
    const source = new TextEncoder().encode("abcdefghijklmnopqrstuvwxyz0123456789");
    const expected: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const start = i % 30;
      const end = start + (i % 7);
      text.append(source, start, end);
      expected.push(...source.subarray(start, end));
    }
    expect(Array.from(text.take())).toEqual(expected);
    expect(text.take().length).toBe(0);
  });
});

describe("dispatch backlog", () => {
  test("a backlog far past its first buffer, after it wrapped, keeps every request in order with its due time", async () => {
    // One slot, 300 requests all due at once behind a slow first one: the backlog wraps and grows.
    const offsets = Array.from({ length: 300 }, (_, i) => (i < 10 ? 0 : 2));
    const started: Array<[number, number]> = [];
    const run = dispatch({
      count: offsets.length,
      concurrency: 1,
      arrivalsMs: offsets[Symbol.iterator](),
      spinMs: 0.3,
      isReady: () => true,
      start: async (index, intendedMs) => {
        started.push([index, intendedMs]);
        if (index === 0) await Bun.sleep(20);
        return index;
      },
    });
    const results = await run.done;
    expect(results).toEqual([...offsets.keys()]);
    expect(started.map(([i]) => i)).toEqual([...offsets.keys()]);
    for (const [i, intendedMs] of started) expect([i, intendedMs]).toEqual([i, run.startMs + offsets[i]!]);
  });

  test("bad counts and concurrencies are refused, naming the value", () => {
    const start = async () => 1;
    expect(() => dispatch({ count: -1, concurrency: 1, arrivalsMs: null, spinMs: 0, isReady: () => true, start })).toThrow("dispatch: bad count -1");
    expect(() => dispatch({ count: 1.5, concurrency: 1, arrivalsMs: null, spinMs: 0, isReady: () => true, start })).toThrow("dispatch: bad count 1.5");
    expect(() => dispatch({ count: 1, concurrency: 0.5, arrivalsMs: null, spinMs: 0, isReady: () => true, start })).toThrow("dispatch: bad concurrency 0.5");
  });
});

test("toEpochMs turns the monotonic clock into wall-clock ms", () => {
  expect(Math.abs(toEpochMs(nowMs()) - Date.now())).toBeLessThan(50);
});
