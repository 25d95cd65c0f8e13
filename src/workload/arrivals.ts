/**
 * When each request of an open-loop line is meant to be sent, as vLLM's `bench serve` defines it: gaps drawn from
 * a gamma distribution of shape K (--burstiness) and mean 1/R (--request-rate), so K = 1 is a Poisson process and
 * a larger K is more regular (K = inf: evenly spaced). With a fixed number of requests the gaps are rescaled so that
 * the last one is due at exactly N/R, as vLLM does, which keeps the offered rate independent of the seed; with
 * --duration requests arrive until the time is up, unscaled.
 *
 * The gaps come from their own Random (Python's gammavariate, draw for draw), seeded from --seed but never touching
 * the prompt generator: prompts are the same with or without a rate. Every line of a run draws the same sequence,
 * so all pcts and rates share one arrival pattern, stretched to their rate. Nothing is stored: a second pass over
 * the same seed replays the gaps, so a schedule of 10M requests costs no memory.
 */
import { PyRandom } from "./rng.ts";

/** What fixes a line's arrivals. */
export interface ArrivalSpec {
  /** Requests per second; finite. */
  ratePerS: number;
  /** Gamma shape of the gaps; Infinity = constant gaps. */
  burstiness: number;
  /** The run's --seed. */
  seed: bigint;
  /** Requests to send (then the gaps are rescaled to end at count/rate), or null with a duration. */
  count: number | null;
  /** Send only requests due before this many seconds; null with a count. */
  durationS: number | null;
}

/** Keeps the arrival stream apart from the prompt stream, which Random(seed) itself draws. */
const ARRIVAL_SEED_TAG = 0x6172_7276n; // "arrv"

/** The seed of the arrival Random: derived from --seed, so a run is reproducible from its flags alone. */
export const arrivalSeed = (seed: bigint): bigint => ((seed < 0n ? -seed : seed) << 32n) | ARRIVAL_SEED_TAG;

/** An endless source of gaps in seconds (mean 1/rate). */
function gapSource(spec: ArrivalSpec): () => number {
  const { ratePerS, burstiness } = spec;
  if (!(ratePerS > 0 && Number.isFinite(ratePerS))) throw new RangeError(`arrivals: rate must be finite and > 0, got ${ratePerS}`);
  if (!(burstiness > 0)) throw new RangeError(`arrivals: burstiness must be > 0, got ${burstiness}`);
  if (burstiness === Infinity) return () => 1 / ratePerS;
  const rng = new PyRandom(arrivalSeed(spec.seed));
  const scale = 1 / (ratePerS * burstiness);
  return () => rng.gammavariate(burstiness, scale);
}

/** How many requests the line sends: `count`, or the arrivals due before the duration. */
export function arrivalCount(spec: ArrivalSpec): number {
  if (spec.durationS === null) return spec.count ?? 0;
  // Options, the in-flight limit and every cell's plan ask for it: a long --duration is millions of draws, made once.
  const key = `${spec.ratePerS}/${spec.burstiness}/${spec.seed}/${spec.durationS}`;
  let n = timedCounts.get(key);
  if (n === undefined) {
    const gap = gapSource(spec);
    n = 0;
    for (let at = gap(); at < spec.durationS; at += gap()) n++;
    timedCounts.set(key, n);
  }
  return n;
}

const timedCounts = new Map<string, number>();

/**
 * The due times of the line's requests, ms from the start of sending, in order. With a count, the rescaling pass
 * over every gap runs here, at the call (before the caller starts its clock), not at the first due time.
 */
export function arrivalOffsetsMs(spec: ArrivalSpec): Iterator<number, void, undefined> & Iterable<number> {
  if (spec.durationS !== null) return timedOffsetsMs(gapSource(spec), spec.durationS);
  const count = spec.count ?? 0;
  // First pass: where the last arrival would fall; the second replays the same gaps, stretched to end at N/R.
  let sumS = 0;
  const first = gapSource(spec);
  for (let i = 0; i < count; i++) sumS += first();
  const factor = sumS > 0 ? count / spec.ratePerS / sumS : 1;
  return scaledOffsetsMs(gapSource(spec), count, factor);
}

function* timedOffsetsMs(gap: () => number, durationS: number): Generator<number, void, undefined> {
  for (let atS = gap(); atS < durationS; atS += gap()) yield atS * 1000;
}

function* scaledOffsetsMs(gap: () => number, count: number, factor: number): Generator<number, void, undefined> {
  let atS = 0;
  for (let i = 0; i < count; i++) {
    atS += gap();
    yield atS * factor * 1000;
  }
}
