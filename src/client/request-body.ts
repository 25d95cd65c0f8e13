/**
 * What fetch sends as a request body. Small bodies are joined into one buffer; large ones go out as a stream over
 * their parts with an explicit content-length (still a plain fixed-length request, no chunked encoding), because
 * Bun keeps a request's body alive until the response ends: joined copies of 70k-token prompts would cost ~0.5 MB
 * per stream in flight. A ReleasingBody goes further: each part is dropped once fetch has taken it, so a prompt in
 * flight costs only what is not yet on the wire.
 */

/** Bodies this large are streamed from their parts instead of joined into one fresh copy per request. */
export const JOIN_LIMIT_BYTES = 64 * 1024;

/** Parts handed over one at a time, each dropped once taken; `onSent` runs once, when the last one is (or at release()). */
export class ReleasingBody {
  private parts: Uint8Array[];
  readonly length: number;
  private sent = false;

  constructor(
    parts: Uint8Array[],
    private readonly onSent: () => void,
  ) {
    this.parts = parts.filter((p) => p.length > 0);
    let length = 0;
    for (const p of this.parts) length += p.length;
    this.length = length;
  }

  /** The next part, or null when all were taken. */
  shift(): Uint8Array | null {
    const part = this.parts.shift() ?? null;
    if (this.parts.length === 0) this.release();
    return part;
  }

  /** Every part was taken. */
  get done(): boolean {
    return this.parts.length === 0;
  }

  /** Every part taken at once (to be joined). */
  drain(): Uint8Array[] {
    const parts = this.parts;
    this.parts = [];
    this.release();
    return parts;
  }

  /** Drops whatever was not sent (a request that ended early) and runs `onSent`; later calls do nothing. */
  release(): void {
    this.parts = [];
    if (this.sent) return;
    this.sent = true;
    this.onSent();
  }
}

export type RequestBody = Uint8Array | readonly Uint8Array[] | ReleasingBody;

/** fetch's body and the extra headers it needs. */
export function fetchBody(body: RequestBody): { body: Uint8Array | ReadableStream<Uint8Array>; headers?: Record<string, string> } {
  if (body instanceof Uint8Array) return { body };
  if (!(body instanceof ReleasingBody)) {
    if (body.length === 1) return { body: body[0] as Uint8Array };
    // Plain parts (shared by other requests) take the same road; dropping this copy's references frees nothing early.
    body = new ReleasingBody([...body], () => {});
  }
  if (body.length <= JOIN_LIMIT_BYTES) return { body: Buffer.concat(body.drain(), body.length) };
  const parts = body;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const part = parts.shift();
        if (part !== null) controller.enqueue(part);
        if (parts.done) controller.close();
      },
    },
    // Nothing is read ahead of the socket: a part leaves memory once sent.
    { highWaterMark: 0 },
  );
  return { body: stream, headers: { "content-length": String(parts.length) } };
}
