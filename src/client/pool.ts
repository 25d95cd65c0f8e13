/** Concurrency limiter: a fixed number of workers pulling task indexes in order (no queue of promises). */

/** Options of runPool. */
export interface PoolOptions<T> {
  /** When it aborts, no new task starts; tasks already started run to their end. */
  signal?: AbortSignal;
  /** Called as each task resolves, e.g. for progress. */
  onSettled?: (index: number, result: T) => void;
}

/**
 * Runs task(0..count-1) with at most `concurrency` in flight, started in index order. Resolves when every
 * started task has settled; indexes never started (after an abort) hold undefined. Tasks are expected not
 * to reject; if one does, no new task starts and runPool rejects with that error once the others settled.
 */
export async function runPool<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
  opts: PoolOptions<T> = {},
): Promise<(T | undefined)[]> {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`runPool: bad count ${count}`);
  if (!(concurrency >= 1)) throw new RangeError(`runPool: bad concurrency ${concurrency}`);
  const results = new Array<T | undefined>(count).fill(undefined);
  let next = 0;
  let failed = false;
  let firstError: unknown;

  const worker = async (): Promise<void> => {
    while (next < count && !failed && !opts.signal?.aborted) {
      const index = next++;
      try {
        const result = await task(index);
        results[index] = result;
        opts.onSettled?.(index, result);
      } catch (err) {
        if (!failed) firstError = err;
        failed = true;
      }
    }
  };

  const workerCount = Math.min(count, Math.floor(Math.min(concurrency, Number.MAX_SAFE_INTEGER)));
  const workers: Promise<void>[] = [];
  for (let w = 0; w < workerCount; w++) workers.push(worker());
  await Promise.all(workers);
  if (failed) throw firstError;
  return results;
}
