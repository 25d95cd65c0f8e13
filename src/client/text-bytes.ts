/**
 * A request's generated text kept as the raw content of its JSON strings (still escaped, no quotes), copied out
 * of each event as it arrives, so that no event payload (and no network chunk under it) is kept until the run
 * ends. The contents of several JSON strings, concatenated, are the content of one valid JSON string (each one
 * ends on a complete escape), so the whole text is decoded once, by JSON.parse, after the run.
 */

const decoder = new TextDecoder();

/** Sizes the first buffer from the output length: most tokens are a few bytes of text, escapes take up to 12. */
const BYTES_PER_TOKEN_GUESS = 6;
const MIN_BYTES = 64;
const MAX_FIRST_BYTES = 64 * 1024;

/** A growable byte buffer of escaped JSON string content. */
export class EscapedText {
  private bytes: Uint8Array | null = null;
  private length = 0;
  private readonly firstBytes: number;

  constructor(expectedTokens: number) {
    this.firstBytes = Math.min(MAX_FIRST_BYTES, Math.max(MIN_BYTES, expectedTokens * BYTES_PER_TOKEN_GUESS));
  }

  /** Appends src[start, end) (the content of one JSON string). */
  append(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (n <= 0) return;
    let bytes = this.bytes;
    if (bytes === null || this.length + n > bytes.length) {
      const bigger = new Uint8Array(Math.max(this.length + n, bytes === null ? this.firstBytes : bytes.length * 2));
      if (bytes !== null) bigger.set(bytes.subarray(0, this.length));
      bytes = bigger;
      this.bytes = bigger;
    }
    bytes.set(src.subarray(start, end), this.length);
    this.length += n;
  }

  /** An exact-size copy of everything appended (the buffer itself is dropped). */
  take(): Uint8Array {
    const out = this.bytes === null ? new Uint8Array(0) : this.bytes.slice(0, this.length);
    this.bytes = null;
    this.length = 0;
    return out;
  }
}

/** The text of escaped JSON string content; "" when it is not valid (never throws). */
export function decodeEscapedText(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  try {
    const text: unknown = JSON.parse(`"${decoder.decode(bytes)}"`);
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}
