import { describe, expect, test } from "bun:test";
import { cacheable, Predictor } from "../../../src/replay/predict.ts";
import type { TraceRequest } from "../../../src/replay/trace.ts";
import { generateTrace, sharedByIds } from "../../helpers/mooncake-trace.ts";

const req = (index: number, inputLength: number, hashIds: number[], outputLength = 1): TraceRequest =>
  ({ index, line: index + 1, timestampMs: 0, inputLength, outputLength, hashIds });

describe("cacheable", () => {
  test("whole pages, at most input_length - 1", () => {
    expect(cacheable(100, 200, 16)).toBe(96);
    expect(cacheable(200, 200, 1)).toBe(199);
    expect(cacheable(200, 200, 16)).toBe(192);
    expect(cacheable(15, 200, 16)).toBe(0);
  });
});

describe("Predictor", () => {
  test("finished prefills set the expectation; those in flight only widen the range", () => {
    const p = new Predictor({ blockSize: 10, pageSize: 1, capacityTokens: null });
    const a = req(0, 25, [1, 2, 3]);
    expect(p.onSend(a)).toEqual({ infinite: 0, lower: 0, upper: 0, evictionLoss: 0 });
    // a is in prefill: b may find 20 tokens (blocks 1, 2) or none.
    const b = req(1, 30, [1, 2, 4]);
    expect(p.onSend(b)).toEqual({ infinite: 0, lower: 0, upper: 20, evictionLoss: 0 });
    p.onFirstToken(a);
    // a's partial last block (5 ids of block 3) is shared by c's full block 3.
    const c = req(2, 40, [1, 2, 3, 5]);
    expect(p.onSend(c)).toEqual({ infinite: 25, lower: 25, upper: 25, evictionLoss: 0 });
    p.onFailBeforeFirstToken(b);
    const d = req(3, 30, [1, 2, 4]);
    expect(p.onSend(d).upper).toBe(20);
    expect(p.onSend(req(4, 20, [1, 2])).upper).toBe(19);
  });

  test("the same id after another prefix is another prefix", () => {
    const p = new Predictor({ blockSize: 10, pageSize: 1, capacityTokens: null });
    const a = req(0, 20, [1, 2]);
    p.onSend(a);
    p.onFirstToken(a);
    expect(p.onSend(req(1, 20, [3, 2])).infinite).toBe(0);
    expect(p.onSend(req(2, 20, [1, 7])).infinite).toBe(10);
  });

  test("matches brute force on a generated trace, requests one at a time", () => {
    const B = 16;
    const lines = generateTrace({ blockSize: B, systems: 3, systemBlocks: 2, conversations: 9, turns: 4, maxTurnTokens: 50, turnGapMs: 100, startGapMs: 30, outputLength: 3, seed: 3 });
    for (const page of [1, 4, 16]) {
      const p = new Predictor({ blockSize: B, pageSize: page, capacityTokens: null });
      lines.forEach((l, i) => {
        const r = req(i, l.input_length, l.hash_ids, l.output_length);
        let best = 0;
        for (let k = 0; k < i; k++) best = Math.max(best, sharedByIds(l, lines[k]!, B));
        expect(p.onSend(r).infinite).toBe(Math.floor(Math.min(best, l.input_length - 1) / page) * page);
        p.onFirstToken(r);
        p.onFinish(r, l.output_length);
      });
    }
  });

  test("the LRU model: prompts that do not fit together evict each other; a prefix outlives its extensions", () => {
    // Capacity 4 pages of 10: a's 3 pages, then b's 3 evict the 2 least recent, a's deepest (its page 0 is newer).
    const p = new Predictor({ blockSize: 10, pageSize: 10, capacityTokens: 40 });
    const seq = (r: TraceRequest) => {
      const pred = p.onSend(r);
      p.onFirstToken(r);
      p.onFinish(r, 1);
      return pred;
    };
    expect(seq(req(0, 31, [1, 2, 3, 4]))).toMatchObject({ lower: 0 });
    expect(seq(req(1, 31, [5, 6, 7, 8]))).toMatchObject({ lower: 0 });
    const again = seq(req(2, 31, [1, 2, 3, 4]));
    expect(again.infinite).toBe(30);
    expect(again.lower).toBe(10);
    expect(again.evictionLoss).toBe(20);
    // With room for everything nothing is lost.
    const roomy = new Predictor({ blockSize: 10, pageSize: 10, capacityTokens: 1000 });
    for (const [i, ids] of [[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4]].entries()) {
      const r = req(i, 31, ids);
      const pred = roomy.onSend(r);
      expect(pred.evictionLoss).toBe(0);
      roomy.onFirstToken(r);
      roomy.onFinish(r, 1);
    }
  });

  test("output pages take capacity", () => {
    const p = new Predictor({ blockSize: 10, pageSize: 10, capacityTokens: 30 });
    const a = req(0, 30, [1, 2, 3]);
    p.onSend(a);
    p.onFirstToken(a);
    // 30 prompt + 20 output tokens: 5 pages in a 3-page cache; the shallowest stay.
    p.onFinish(a, 21);
    expect(p.onSend(req(1, 31, [1, 2, 3, 4]))).toMatchObject({ infinite: 30, lower: 30 });
    const q = new Predictor({ blockSize: 10, pageSize: 10, capacityTokens: 30 });
    const x = req(0, 30, [1, 2, 3]);
    q.onSend(x);
    q.onFirstToken(x);
    q.onFinish(x, 21);
    const y = req(1, 30, [9, 8, 7]);
    q.onSend(y);
    q.onFirstToken(y);
    q.onFinish(y, 1);
    expect(q.onSend(req(2, 31, [1, 2, 3, 4])).lower).toBe(0);
  });
});
