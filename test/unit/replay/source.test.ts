/**
 * TraceSource builds a replay's bodies ahead of need in slices off the clock: a prompt of many new blocks is drawn
 * a block per slice when the slice is that short (so one long prompt never holds the JS thread for its whole
 * drawing), every body is byte-identical to one built at once, and a body taken before the pump reached it is
 * built on the spot and not again.
 */
import { describe, expect, test } from "bun:test";
import { bodyParts, createTemplate, IDS_PLACEHOLDER } from "../../../src/backends/body.ts";
import type { RequestBody } from "../../../src/client/request-body.ts";
import { BlockSource } from "../../../src/replay/blocks.ts";
import { TraceSource } from "../../../src/replay/source.ts";
import type { TraceRequest } from "../../../src/workload/trace.ts";

const population = Uint32Array.from({ length: 5000 }, (_, i) => i * 3 + 7);
const B = 16;
const template = createTemplate({ input_ids: IDS_PLACEHOLDER, max_new_tokens: 2 });
const request = (index: number, blocks: number, first: number): TraceRequest => ({
  line: index + 1,
  index,
  timestampMs: index,
  inputLength: blocks * B - 3,
  outputLength: 2,
  hashIds: Array.from({ length: blocks }, (_, j) => first + j),
});
const bytes = (b: RequestBody): string => {
  const parts = b instanceof Uint8Array ? [b] : (b as readonly Uint8Array[]);
  return parts.map((p) => Buffer.from(p).toString("latin1")).join("");
};

/** Counts the blocks a BlockSource draws (prepare or prompt on a block it does not keep). */
class CountingBlocks extends BlockSource {
  prepared = 0;
  override prepare(hashId: number): void {
    this.prepared++;
    super.prepare(hashId);
  }
}

describe("TraceSource", () => {
  test("a long prompt's new blocks are drawn one per slice when the slice is that short; the body is the one built at once", async () => {
    const requests = [request(0, 40, 0), request(1, 3, 100)];
    const blocks = new CountingBlocks(population, 5n, B);
    const source = new TraceSource(
      requests,
      blocks,
      () => template,
      () => undefined,
      8,
      0,
    );
    // The constructor's first slice: one block of the 40, no body yet.
    expect(blocks.prepared).toBe(1);
    expect(source.ready(0)).toBe(false);
    await source.filled();
    expect(source.ready(0) && source.ready(1)).toBe(true);
    expect(blocks.prepared).toBe(43);
    const fresh = new BlockSource(population, 5n, B);
    const taken = requests.map((r) => bytes(source.take(r.index).body));
    expect(taken).toEqual(requests.map((r) => bytes(bodyParts(template, new Uint8Array(0), fresh.promptDigits(r)))));
    expect(JSON.parse(taken[0]!).input_ids).toHaveLength(requests[0]!.inputLength);
  });

  test("a body taken before the pump reached it is built on the spot, and the pump goes on after it", async () => {
    const requests = [request(0, 30, 0), request(1, 2, 50), request(2, 2, 60)];
    const blocks = new CountingBlocks(population, 5n, B);
    const source = new TraceSource(
      requests,
      blocks,
      () => template,
      () => undefined,
      8,
      0,
    );
    const fresh = new BlockSource(population, 5n, B);
    expect(source.ready(0)).toBe(false);
    expect(bytes(source.take(0).body)).toBe(bytes(bodyParts(template, new Uint8Array(0), fresh.promptDigits(requests[0]!))));
    await source.filled();
    expect([source.ready(0), source.ready(1), source.ready(2)]).toEqual([false, true, true]);
    // The pump drew one of request 0's blocks (the rest were drawn on the spot), then only requests 1 and 2's.
    expect(blocks.prepared).toBe(1 + 2 + 2);
  });
});
