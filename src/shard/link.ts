/**
 * A framed, message-level connection over a Bun TCP or unix socket, for both ends of the shard protocol: writes
 * are queued until the kernel takes them (frames can be megabytes), reads are decoded into messages, and a peer
 * that sends an oversized or unreadable frame is cut off at once.
 */
import type { Socket } from "bun";
import { encodeFrame, FrameDecoder } from "./frames.ts";

/** What a link tells its owner. */
export interface LinkEvents {
  message(value: unknown): void;
  /** The byte stream broke the framing (oversized, not JSON): the link closes right after. */
  protocolError(reason: string): void;
  /** The connection is gone (either side closed it, or it broke). */
  closed(): void;
}

/** One end of a connection. */
export class Link {
  private readonly decoder = new FrameDecoder();
  private queue: Uint8Array[] = [];
  private isClosed = false;
  events: LinkEvents | null = null;

  constructor(private readonly socket: Socket<unknown>) {}

  /** Sends one message (queued behind earlier ones); ignored once closed. */
  send(message: unknown): void {
    if (this.isClosed) return;
    this.queue.push(encodeFrame(message));
    this.flush();
  }

  private endWhenDrained = false;

  /** Closes after everything queued has been written. */
  end(): void {
    if (this.isClosed) return;
    if (this.queue.length === 0) this.socket.end();
    else this.endWhenDrained = true;
  }

  /** Closes at once. */
  destroy(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.socket.terminate();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Socket handler: bytes arrived. */
  onData(data: Uint8Array): void {
    if (this.isClosed) return;
    let messages: unknown[];
    try {
      // Bun may reuse the buffer after this callback: keep a copy of what the decoder holds on to.
      messages = this.decoder.push(data.slice());
    } catch (err) {
      this.events?.protocolError((err as Error).message);
      this.destroy();
      this.reportClosed();
      return;
    }
    for (const m of messages) {
      if (this.isClosed) return;
      this.events?.message(m);
    }
  }

  /** Socket handler: the kernel can take more. */
  onDrain(): void {
    this.flush();
  }

  /** Socket handler: closed or broken. */
  onClose(): void {
    this.isClosed = true;
    this.reportClosed();
  }

  private closedReported = false;

  private reportClosed(): void {
    if (this.closedReported) return;
    this.closedReported = true;
    this.events?.closed();
  }

  private flush(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const written = this.socket.write(head);
      if (written < 0) return;
      if (written < head.length) {
        this.queue[0] = head.subarray(written);
        return;
      }
      this.queue.shift();
    }
    if (this.endWhenDrained) this.socket.end();
  }
}

/** Socket handlers that route a Bun socket's events to the Link stored in its data. */
export const LINK_HANDLERS = {
  data(socket: Socket<Link>, data: Uint8Array) {
    socket.data.onData(data);
  },
  drain(socket: Socket<Link>) {
    socket.data.onDrain();
  },
  close(socket: Socket<Link>) {
    socket.data.onClose();
  },
  error(socket: Socket<Link>) {
    socket.data.onClose();
  },
};
