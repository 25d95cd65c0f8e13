/**
 * Length-prefixed frames on a byte stream: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. A frame
 * longer than the limit is refused before any of it is buffered, so a stranger cannot make the coordinator hold
 * gigabytes; a truncated stream simply never yields its last frame.
 */

/** Largest frame a shard may send: one pct's records of a shard, with every ITL. */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** One message as a frame. */
export function encodeFrame(message: unknown): Uint8Array {
  const body = encoder.encode(JSON.stringify(message));
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setUint32(0, body.length);
  frame.set(body, 4);
  return frame;
}

/** Why a byte stream cannot be read as frames. */
export class FrameError extends Error {
  override name = "FrameError";
}

/** Incremental decoder: push() bytes as they arrive, get every whole frame's parsed JSON back. */
export class FrameDecoder {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Parsed frames completed by these bytes; throws FrameError for an oversized frame or a body that is not JSON. */
  push(chunk: Uint8Array): unknown[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const out: unknown[] = [];
    for (;;) {
      if (this.pendingBytes < 4) return out;
      const head = this.peek(4);
      const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
      if (length > this.maxFrameBytes) throw new FrameError(`frame of ${length} bytes exceeds the ${this.maxFrameBytes}-byte limit`);
      if (this.pendingBytes < 4 + length) return out;
      const frame = this.take(4 + length).subarray(4);
      let text: string;
      try {
        text = decoder.decode(frame);
        out.push(JSON.parse(text));
      } catch {
        throw new FrameError("frame is not UTF-8 JSON");
      }
    }
  }

  /** The first n pending bytes, joined (n <= pendingBytes). */
  private peek(n: number): Uint8Array {
    const first = this.pending[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const joined = this.join();
    return joined.subarray(0, n);
  }

  /** Removes and returns the first n pending bytes. */
  private take(n: number): Uint8Array {
    const joined = this.join();
    const taken = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return taken;
  }

  private join(): Uint8Array {
    if (this.pending.length === 1) return this.pending[0]!;
    const joined = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const piece of this.pending) {
      joined.set(piece, at);
      at += piece.length;
    }
    this.pending = [joined];
    return joined;
  }
}
