/** The cache model's behaviour: --server-cache's statement first, the passport's measurement where it leaves a way open. */
import { describe, expect, test } from "bun:test";
import { parseCacheBehaviour, UNKNOWN_BEHAVIOUR } from "../../../src/config/cache-behaviour.ts";
import { modelBehaviour } from "../../../src/engine/model-behaviour.ts";

const passport = (answersCached: boolean | null, insertAt: "prefill" | "finish" | null = null) => ({
  file: "p.json",
  pageSize: 16,
  capacityTokens: 4000,
  answersCached,
  insertAt,
  engine: null,
  serverVersion: null,
  baseUrl: null,
});

describe("modelBehaviour", () => {
  test("nothing stated or measured: every way open", () => {
    expect(modelBehaviour({})).toEqual(UNKNOWN_BEHAVIOUR);
    expect(modelBehaviour({ passport: passport(null) })).toEqual(UNKNOWN_BEHAVIOUR);
  });

  test("the passport's answers figure where --server-cache does not say", () => {
    expect(modelBehaviour({ passport: passport(false) })).toEqual({ ...UNKNOWN_BEHAVIOUR, answersCached: false });
    const stated = parseCacheBehaviour("server-cache", "insert=prefill,order=fcfs");
    expect(modelBehaviour({ serverCache: stated, passport: passport(true) })).toEqual({ ...stated, answersCached: true });
  });

  test("what --server-cache states wins over the passport", () => {
    const stated = parseCacheBehaviour("server-cache", "answers=uncached,insert=finish");
    expect(modelBehaviour({ serverCache: stated, passport: passport(true, "prefill") })).toEqual(stated);
  });

  test("the passport's insert figure where --server-cache does not say", () => {
    expect(modelBehaviour({ passport: passport(null, "finish") })).toEqual({ ...UNKNOWN_BEHAVIOUR, insertAt: "finish" });
    const stated = parseCacheBehaviour("server-cache", "answers=cached");
    expect(modelBehaviour({ serverCache: stated, passport: passport(false, "prefill") })).toEqual({ ...stated, insertAt: "prefill" });
  });

  test("order=fcfs and order=any parse; another order is one usage line naming the choices", () => {
    expect(parseCacheBehaviour("server-cache", "order=fcfs").order).toBe("fcfs");
    expect(parseCacheBehaviour("server-cache", "order=any")).toEqual(UNKNOWN_BEHAVIOUR);
    expect(() => parseCacheBehaviour("server-cache", "order=lpm")).toThrow('--server-cache: "order=lpm": order is one of fcfs, any');
  });
});
