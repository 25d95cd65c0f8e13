/**
 * One clock for every timestamp: performance.now() in milliseconds (sub-microsecond resolution).
 * performance.timeOrigin + nowMs() is comparable across processes on the same host, which the mock's
 * ground-truth log relies on; Bun's hrtime counts from process start and is not.
 */
export const nowMs = (): number => performance.now();

/** Epoch milliseconds of a nowMs() reading, shared by every process on the host. */
export const toEpochMs = (ms: number): number => performance.timeOrigin + ms;
