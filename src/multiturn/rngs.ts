/**
 * The multi-turn run's random streams. System prompts come from random.Random(seed) as the sweep's prefixes do;
 * every other stream has its own seed derived from (seed, stream, index), so a client's turns are the same ids
 * however the server's timing interleaves the clients, and think times or the queue order never shift them.
 */
import type { ThinkTime } from "../config/flag-values.ts";
import { PyRandom } from "../workload/rng.ts";

const STREAM_TURNS = 1n;
const STREAM_THINK = 2n;
const STREAM_ORDER = 3n;

/** random.Random(abs(seed) * 2**64 + stream * 2**32 + index). */
function derived(seed: bigint, stream: bigint, index: number): PyRandom {
  const base = seed < 0n ? -seed : seed;
  return new PyRandom((base << 64n) | (stream << 32n) | BigInt(index));
}

/** Client c's user turns. */
export const turnRandom = (seed: bigint, client: number): PyRandom => derived(seed, STREAM_TURNS, client);
/** Client c's think times. */
export const thinkRandom = (seed: bigint, client: number): PyRandom => derived(seed, STREAM_THINK, client);
/** The ready queue's `random` policy. */
export const orderRandom = (seed: bigint): PyRandom => derived(seed, STREAM_ORDER, 0);

/** One think time, ms. */
export function drawThinkMs(t: ThinkTime, rng: PyRandom): number {
  switch (t.kind) {
    case "fixed":
      return t.s * 1000;
    case "exp":
      return -Math.log(1 - rng.random()) * t.meanS * 1000;
    case "uniform":
      return (t.lowS + rng.random() * (t.highS - t.lowS)) * 1000;
  }
}
