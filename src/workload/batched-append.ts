/**
 * --dump-prompts writes every prompt's ids, which can be gigabytes: lines are gathered and appended in batches of
 * about `batchBytes` (4 MiB by default), so memory stays bounded however many prompts, with few write calls.
 */
import { appendFileSync } from "node:fs";

export interface BatchedAppender {
  /** Queues the pieces of one or more lines; appends the batch once it holds `batchBytes` or more. */
  push(...parts: Uint8Array[]): void;
  /** Appends whatever is queued. */
  flush(): void;
}

export function batchedAppender(path: string, batchBytes = 4 << 20): BatchedAppender {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length > 0) appendFileSync(path, Buffer.concat(batch));
    batch = [];
    bytes = 0;
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
