import { describe, expect, test } from "bun:test";
import { encodeFrame, FrameDecoder, FrameError } from "../../../src/shard/frames.ts";

describe("length-prefixed JSON frames", () => {
  test("frames split at every byte, and several frames in one chunk, come back whole and in order", () => {
    const messages = [{ t: "hello", rank: 1 }, { t: "records", text: "é\u2028€", n: [1.5, 2] }, { t: "beat" }];
    const bytes = new Uint8Array(messages.reduce((n, m) => n + encodeFrame(m).length, 0));
    let at = 0;
    for (const m of messages) {
      const f = encodeFrame(m);
      bytes.set(f, at);
      at += f.length;
    }
    for (let split = 0; split <= bytes.length; split++) {
      const d = new FrameDecoder();
      expect([...d.push(bytes.subarray(0, split)), ...d.push(bytes.subarray(split))]).toEqual(messages);
    }
    const d = new FrameDecoder();
    const out: unknown[] = [];
    for (const b of bytes) out.push(...d.push(new Uint8Array([b])));
    expect(out).toEqual(messages);
  });

  test("an oversized frame is refused from its header alone; a body that is not JSON is refused", () => {
    const d = new FrameDecoder(1000);
    const head = new Uint8Array(4);
    new DataView(head.buffer).setUint32(0, 1001);
    expect(() => d.push(head)).toThrow(FrameError);
    expect(() => new FrameDecoder().push(new Uint8Array([0, 0, 0, 3, 0x7b, 0x7b, 0x7b]))).toThrow("frame is not UTF-8 JSON");
    expect(() => new FrameDecoder().push(new Uint8Array([0, 0, 0, 2, 0xff, 0xfe]))).toThrow("frame is not UTF-8 JSON");
  });
});
