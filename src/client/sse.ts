/**
 * Incremental, zero-copy splitter of a text/event-stream body into `data:` payloads.
 * Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 *
 * Deliberate departures from a full EventSource parser:
 * - Payloads are dispatched per `data:` line, not per blank-line-terminated event. SGLang and vLLM both
 *   send exactly one compact JSON document per data line (docs/protocol.md §1.3), so joining multi-line data
 *   with "\n" would only cost a copy.
 * - `event:`, `id:`, `retry:`, comments (`:`), unknown fields and blank lines are ignored, as are empty
 *   data lines.
 * - A line is limited to MAX_SSE_LINE_BYTES: past it push() returns false and the splitter reads nothing more (a
 *   server sending one line that never ends would otherwise grow this process's memory without bound, and the stall
 *   timer never fires while bytes keep coming).
 *
 * Payload lifetime rule: a payload is either a `subarray` view into the chunk given to push() or, for a
 * line that spans chunks, a view into a buffer freshly allocated for that one line. The splitter never
 * writes into either afterwards, so a payload stays valid for as long as the caller leaves its chunks
 * untouched (Bun's default stream reader hands out a new Uint8Array per read). A retained view keeps its
 * whole chunk alive; copy it (`slice()`) if that matters.
 */

const LF = 10;
const CR = 13;
const SPACE = 32;
const DATA_PREFIX = [100, 97, 116, 97, 58]; // "data:"

/**
 * The longest SSE line read, in bytes: 16 MiB. The longest legitimate events are SGLang's cumulative ones (without
 * --incremental-streaming-output each event repeats the whole text so far): a 1,000,000-token answer at 16 bytes a
 * token (UTF-8 escaped as \uXXXX runs, plus the event's meta_info) still fits, eight times the longest answer of a
 * 128K-context model; a delta event is a few hundred bytes. A longer line is a broken or hostile server.
 */
export const MAX_SSE_LINE_BYTES = 16 * 1024 * 1024;

/** Feeds raw body chunks in, calls back once per non-empty `data:` payload. */
export interface SseSplitter {
  /** False once a line has run past the limit: its bytes are dropped, and every later chunk is ignored. */
  push(chunk: Uint8Array): boolean;
  /** End of body: flushes a final line that had no line terminator. */
  finish(): void;
}

/**
 * Creates a splitter that calls `onData` synchronously, in order, for each non-empty data payload; a line longer
 * than `maxLineBytes` (not counting its terminator) ends it.
 */
export function createSseSplitter(onData: (payload: Uint8Array) => void, maxLineBytes = MAX_SSE_LINE_BYTES): SseSplitter {
  // Pieces of the line that is still open at the end of the previous chunk(s). Kept as a list and joined
  // once when the line ends, so a multi-megabyte line arriving in many chunks costs O(n), not O(n^2).
  let fragments: Uint8Array[] = [];
  let fragmentsLen = 0;
  let overflowed = false;

  function overflow(): boolean {
    overflowed = true;
    fragments = [];
    fragmentsLen = 0;
    return false;
  }

  function dispatchLine(line: Uint8Array): void {
    if (line.length < DATA_PREFIX.length) return;
    for (let k = 0; k < DATA_PREFIX.length; k++) {
      if (line[k] !== DATA_PREFIX[k]) return;
    }
    const start = line[5] === SPACE ? 6 : 5;
    if (line.length > start) onData(line.subarray(start));
  }

  function endOpenLine(tail: Uint8Array): void {
    if (fragmentsLen === 0) {
      dispatchLine(tail);
      return;
    }
    const joined = new Uint8Array(fragmentsLen + tail.length);
    let offset = 0;
    for (const piece of fragments) {
      joined.set(piece, offset);
      offset += piece.length;
    }
    joined.set(tail, offset);
    fragments = [];
    fragmentsLen = 0;
    dispatchLine(joined);
  }

  function push(chunk: Uint8Array): boolean {
    if (overflowed) return false;
    let pos = 0;
    const end = chunk.length;
    // CR, LF and CRLF all end a line. CRLF is taken as a line end plus an empty line, which is ignored
    // anyway, so a CR and its LF arriving in different chunks need no state. The CR search is one native
    // scan that usually returns -1 (JSON has no raw CR); it is redone only after a CR has been consumed.
    let nextCr = chunk.indexOf(CR);
    while (pos < end) {
      if (nextCr !== -1 && nextCr < pos) nextCr = chunk.indexOf(CR, pos);
      const nextLf = chunk.indexOf(LF, pos);
      const lineEnd = nextCr === -1 ? nextLf : nextLf === -1 ? nextCr : Math.min(nextCr, nextLf);
      if (lineEnd === -1) {
        if (fragmentsLen + (end - pos) > maxLineBytes) return overflow();
        fragments.push(chunk.subarray(pos));
        fragmentsLen += end - pos;
        return true;
      }
      if (fragmentsLen + (lineEnd - pos) > maxLineBytes) return overflow();
      endOpenLine(chunk.subarray(pos, lineEnd));
      pos = lineEnd + 1;
    }
    return true;
  }

  function finish(): void {
    if (!overflowed && fragmentsLen > 0) endOpenLine(new Uint8Array(0));
  }

  return { push, finish };
}
