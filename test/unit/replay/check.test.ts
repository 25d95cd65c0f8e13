import { describe, expect, test } from "bun:test";
import { judge, totals } from "../../../src/replay/check.ts";
import { predictFromRecords } from "../../../src/metrics/predict-from-records.ts";
import type { TraceRequest } from "../../../src/replay/trace.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { makeRecord } from "../../helpers/record.ts";

const req = (index: number, inputLength: number, hashIds: number[]): TraceRequest => ({
  index,
  line: index + 1,
  timestampMs: 0,
  inputLength,
  outputLength: 2,
  hashIds,
});
const rec = (index: number, startMs: number, firstTokenMs: number, lastEventMs: number, cachedTokens: number, ok = true): RequestRecord =>
  makeRecord({ index, ok, startMs, firstTokenMs, lastEventMs, latencyMs: lastEventMs - startMs, cachedTokens, outputLen: 2 });

describe("predictFromRecords", () => {
  const rs = [req(0, 30, [1, 2, 3]), req(1, 30, [1, 2, 4]), req(2, 30, [1, 2, 5])];
  const o = { blockSize: 10, pageSize: 1, capacityTokens: null };

  test("a request sent after another's first token expects its prefix; one sent before only may find it", () => {
    // 1 is sent while 0 is in prefill; 2 after 0's first token (and 1's).
    const preds = predictFromRecords(rs, [rec(0, 0, 10, 20, 0), rec(1, 5, 15, 25, 0), rec(2, 16, 30, 40, 20)], o);
    expect(preds.get(0)).toMatchObject({ lower: 0, upper: 0 });
    expect(preds.get(1)).toMatchObject({ lower: 0, upper: 20 });
    expect(preds.get(2)).toMatchObject({ lower: 20, upper: 20 });
  });

  test("at one instant a send goes first: a first token at the same ms only widens the range", () => {
    const preds = predictFromRecords(rs, [rec(0, 0, 10, 20, 0), rec(1, 10, 15, 25, 0)], o);
    expect(preds.get(1)).toMatchObject({ lower: 0, upper: 20 });
  });

  test("a request that failed before its first token is never cached", () => {
    const preds = predictFromRecords(rs, [rec(0, 0, 0, 5, -1, false), rec(2, 10, 12, 14, 0)], o);
    expect(preds.get(2)).toMatchObject({ lower: 0, upper: 0 });
  });

  test("judge and totals", () => {
    const p = { infinite: 20, lower: 10, upper: 25, evictionLoss: 10 };
    expect(judge(rec(0, 0, 1, 2, 10), p).verdict).toBe("ok");
    expect(judge(rec(0, 0, 1, 2, 9), p).verdict).toBe("short");
    expect(judge(rec(0, 0, 1, 2, 26), p).verdict).toBe("over");
    expect(judge(rec(0, 0, 1, 2, -1), p).verdict).toBe("unreported");
    expect(judge(rec(0, 0, 0, 2, 5, false), p).verdict).toBe("failed");
    const t = totals([judge(rec(0, 0, 1, 2, 10), p), judge(rec(1, 0, 1, 2, 9), p), judge(rec(2, 0, 1, 2, -1), p)]);
    expect(t).toEqual({
      checked: 2,
      ok: 1,
      short: 1,
      over: 0,
      expectedInfiniteTokens: 40,
      expectedLowerTokens: 20,
      observedTokens: 19,
      predictedEvictionTokens: 20,
      observedShortfallTokens: 21,
    });
  });
});
