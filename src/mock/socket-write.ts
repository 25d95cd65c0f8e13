/**
 * Writes that reach the socket before they return, so the truth log can stamp an event the moment it left.
 *
 * Bun's node:http `res.write()` only copies into uWebSockets' cork buffer, which is sent when the event-loop
 * task ends (or when another socket is written): a write followed by 5 ms of JS arrives 5 ms later, so a
 * timestamp taken after `res.write()` is early by everything the task does next. The response's native handle
 * has `cork(fn)`, which runs fn corked and then uncorks, i.e. sends, before it returns; writing inside it
 * is synchronous, unless a `res.write()` earlier in the same task left the socket corked already (then the
 * bytes wait for the task's end as before: stream events must all go through this writer). The handle is internal to Bun (a symbol-keyed property named "handle"), so when it is
 * missing this falls back to `res.write()` and `isSynchronous()` says so.
 */
import type { ServerResponse } from "node:http";

/** The part of Bun's NodeHTTPResponse handle used here. */
interface NativeResponse {
  cork(fn: () => void): void;
  write(chunk: string | Uint8Array): number;
  /** True once uWS saw the client go (an RST or FIN), which can be before node:http's res emits "close". */
  readonly aborted?: boolean;
}

let handleKey: symbol | null | undefined;

function nativeHandle(res: ServerResponse): NativeResponse | null {
  if (handleKey === undefined) {
    handleKey = Object.getOwnPropertySymbols(res).find((key) => key.description === "handle") ?? null;
  }
  if (handleKey === null) return null;
  const handle = (res as unknown as Record<symbol, unknown>)[handleKey] as Partial<NativeResponse> | undefined;
  return handle !== undefined && typeof handle.cork === "function" && typeof handle.write === "function" ? (handle as NativeResponse) : null;
}

/** A response body writer whose writes are on the wire when `write` returns (headers must be sent first). */
export class FlushedWriter {
  private readonly res: ServerResponse;
  private readonly handle: NativeResponse | null;
  private chunk: string | Uint8Array = "";
  private readonly writeChunk = (): void => {
    this.handle?.write(this.chunk);
  };

  constructor(res: ServerResponse) {
    this.res = res;
    this.handle = nativeHandle(res);
  }

  /** True when writes are sent before `write` returns (Bun's native handle was found). */
  isSynchronous(): boolean {
    return this.handle !== null;
  }

  /**
   * Send `chunk` as the next piece of the (chunked) body; a no-op once the response is gone. A client that has just
   * gone is dropped as a real server drops it: the response is destroyed ("close" follows, which cancels the
   * request) instead of writing into the ended stream, where the handle's cork throws "Stream is already ended".
   */
  write(chunk: string | Uint8Array): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.handle === null) {
      this.res.write(chunk);
      return;
    }
    if (this.handle.aborted === true) {
      this.res.destroy();
      return;
    }
    // uWS buffers on backpressure (a slow reader) and never drops bytes, as res.write() does.
    this.chunk = chunk;
    this.handle.cork(this.writeChunk);
    this.chunk = "";
  }
}
