/**
 * --dump-prompts writes every prompt's ids, which can be gigabytes: lines are gathered and handed on in batches of
 * about `batchBytes` (4 MiB by default), so memory stays bounded however many prompts, with few writes. Each batch is
 * a buffer of its own (never a slice of a shared pool), so it can be transferred to another thread.
 */

export interface BatchedAppender {
  /** Queues the pieces of one or more lines; hands the batch on once it holds `batchBytes` or more. */
  push(...parts: Uint8Array[]): void;
  /** Hands on whatever is queued. */
  flush(): void;
}

/** Batches lines for `write` (the sink that appends them: the results writer, or the prompt worker's message). */
export function batchedAppender(write: (batch: Uint8Array) => void, batchBytes = 4 << 20): BatchedAppender {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length > 0) {
      const joined = new Uint8Array(bytes);
      let at = 0;
      for (const p of batch) {
        joined.set(p, at);
        at += p.length;
      }
      batch = [];
      bytes = 0;
      write(joined);
    }
  };
  return {
    push(...parts) {
      for (const p of parts) {
        batch.push(p);
        bytes += p.length;
      }
      if (bytes >= batchBytes) flush();
    },
    flush,
  };
}
