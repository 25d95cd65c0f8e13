import { describe, expect, test } from "bun:test";
import { judge, predictionOf, totals } from "../../../src/metrics/replay-check.ts";
import { UNKNOWN_BEHAVIOUR, type CacheBehaviour } from "../../../src/config/cache-behaviour.ts";
import { expectPoint } from "../../../src/metrics/point-expectations.ts";
import type { TraceRequest } from "../../../src/workload/trace.ts";
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

/** The replay's predictions: the one cache model over the records, one server of unknown capacity and behaviour. */
function predictFromRecords(
  rs: readonly TraceRequest[],
  records: readonly RequestRecord[],
  o: { blockSize: number; pageSize: number; behaviour?: CacheBehaviour },
) {
  const x = expectPoint({
    sequenceOf: (i) => (rs[i] === undefined ? undefined : { hashIds: rs[i]!.hashIds, length: rs[i]!.inputLength }),
    records,
    serverOf: () => 0,
    servers: [{ capacityTokens: null, prior: [] }],
    pageSize: o.pageSize,
    blockSize: o.blockSize,
    behaviour: o.behaviour ?? UNKNOWN_BEHAVIOUR,
  });
  return new Map(records.map((r) => [r.index, predictionOf(x.get(r.index))]));
}

describe("the replay's predictions", () => {
  const rs = [req(0, 30, [1, 2, 3]), req(1, 30, [1, 2, 4]), req(2, 30, [1, 2, 5])];
  const o = { blockSize: 10, pageSize: 1 };

  test("a request sent after another's first token expects its prefix (a server caching at prefill); one sent before only may find it", () => {
    // 1 is sent while 0 is in prefill; 2 after 0's first token (and 1's), but before 0 ended.
    const records = [rec(0, 0, 10, 20, 0), rec(1, 5, 15, 25, 0), rec(2, 16, 30, 40, 20)];
    const preds = predictFromRecords(rs, records, { ...o, behaviour: { insertAt: "prefill", answersCached: true, inflightLocked: true } });
    // 1 was sent before 0's first token: a scheduler may prefill it first (SGLang's longest-prefix order), so 0 may find it.
    // An infinite cache: certainly nothing for 1 (0 in prefill), at most 0's prefix: its ceiling.
    expect(preds.get(0)).toMatchObject({ lower: 0, upper: 20, infinite: 0, ceiling: 20 });
    expect(preds.get(1)).toMatchObject({ lower: 0, upper: 20, infinite: 0, ceiling: 20 });
    expect(preds.get(2)).toMatchObject({ lower: 20, upper: 20 });
    // A server that may cache a prompt only when it ends: 0 had not ended when 2 was sent.
    expect(predictFromRecords(rs, records, o).get(2)).toMatchObject({ lower: 0, upper: 20 });
  });

  test("at one instant a send goes first: a first token at the same ms only widens the range", () => {
    const preds = predictFromRecords(rs, [rec(0, 0, 10, 20, 0), rec(1, 10, 15, 25, 0)], o);
    expect(preds.get(1)).toMatchObject({ lower: 0, upper: 20 });
  });

  test("a request that failed before its first token is never certainly cached (the server may have prefilled it)", () => {
    const preds = predictFromRecords(rs, [rec(0, 0, 0, 5, -1, false), rec(2, 10, 12, 14, 0)], o);
    expect(preds.get(2)).toMatchObject({ lower: 0, upper: 20 });
  });

  test("judge and totals", () => {
    const p = { infinite: 20, ceiling: 25, lower: 10, upper: 25, evictionLoss: 10 };
    expect(judge(rec(0, 0, 1, 2, 10), p).verdict).toBe("ok");
    expect(judge(rec(0, 0, 1, 2, 9), p).verdict).toBe("short");
    expect(judge(rec(0, 0, 1, 2, 26), p).verdict).toBe("over");
    expect(judge(rec(0, 0, 1, 2, -1), p).verdict).toBe("unreported");
    expect(judge(rec(0, 0, 0, 2, 5, false), p).verdict).toBe("failed");
    // No server known for it (a router that named none): no verdict either way, left out of the totals.
    expect(judge(rec(0, 0, 1, 2, 10), null).verdict).toBe("unjudged");
    expect(totals([judge(rec(0, 0, 1, 2, 10), null)]).checked).toBe(0);
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
