import { describe, expect, test } from "bun:test";
import { fetchBody, JOIN_LIMIT_BYTES, ReleasingBody } from "../../../src/client/request-body.ts";

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe("ReleasingBody", () => {
  test("small: joined into one buffer, released at once", () => {
    let sent = 0;
    const body = new ReleasingBody([bytes(3, 1), bytes(0, 9), bytes(2, 2)], () => sent++);
    const out = fetchBody(body);
    expect(out.body).toEqual(Uint8Array.of(1, 1, 1, 2, 2));
    expect(out.headers).toBeUndefined();
    expect(sent).toBe(1);
  });

  test("large: streamed part by part with a content-length; released when the last part is taken, once", async () => {
    let sent = 0;
    const parts = [bytes(JOIN_LIMIT_BYTES, 1), bytes(10, 2), bytes(5, 3)];
    const body = new ReleasingBody(parts, () => sent++);
    const out = fetchBody(body);
    expect(out.headers).toEqual({ "content-length": String(JOIN_LIMIT_BYTES + 15) });
    expect(sent).toBe(0);
    const all = await readAll(out.body as ReadableStream<Uint8Array>);
    expect(all.length).toBe(JOIN_LIMIT_BYTES + 15);
    expect(all.at(-1)).toBe(3);
    expect(sent).toBe(1);
    body.release();
    expect(sent).toBe(1);
  });

  test("a request that ended early releases what was left, once", () => {
    let sent = 0;
    const body = new ReleasingBody([bytes(JOIN_LIMIT_BYTES, 1), bytes(1, 2)], () => sent++);
    expect(body.shift()?.length).toBe(JOIN_LIMIT_BYTES);
    body.release();
    body.release();
    expect(sent).toBe(1);
    expect(body.done).toBe(true);
  });
});
