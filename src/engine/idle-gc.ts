/**
 * Garbage collection between lines. Summarizing a line touches every record at once (parsing the generated text,
 * re-tokenizing it), after its last request ended: garbage in proportion to the requests, made faster than JSC
 * collects it when the heap is large (the tokenizer alone is ~90 MB), which set the peak RSS of a 100k-request line
 * by itself (1.2 GB). A full collection every few thousand records keeps that flat. Only ever call it when no
 * request is in flight: a full collection holds up every event for tens of milliseconds.
 */

/** Records processed between two collections. */
const RECORDS_PER_COLLECTION = 8192;

/** A tick to call once per record processed; it collects every RECORDS_PER_COLLECTION calls. */
export function idleCollector(): () => void {
  let n = 0;
  return () => {
    if (++n % RECORDS_PER_COLLECTION === 0) Bun.gc(true);
  };
}
