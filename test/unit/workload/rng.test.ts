import { describe, expect, test } from "bun:test";
import { PyRandom, seedKey } from "../../../src/workload/rng.ts";
import vectors from "../../fixtures/workload/py-random.json";

const range = (n: number): Uint32Array => Uint32Array.from({ length: n }, (_, i) => i);

function choices(seed: bigint, n: number, k: number): number[] {
  const out = new Uint32Array(k);
  new PyRandom(seed).choicesInto(range(n), out, 0, k);
  return Array.from(out);
}

function randoms(seed: bigint, count: number): number[] {
  const rng = new PyRandom(seed);
  return Array.from({ length: count }, () => rng.random());
}

// The table in protocol.md §6, typed in by hand so it does not depend on the generated fixture.
const PROTOCOL_TABLE: Array<[bigint, number[], number[]]> = [
  [0n, [0.8444218515250481, 0.7579544029403025, 0.420571580830845], [128050, 114938, 63776, 39262, 77531, 61405, 118857, 45995]],
  [1n, [0.13436424411240122, 0.8474337369372327, 0.763774618976614], [20375, 128507, 115821, 38679, 75129, 68162, 98809, 119604]],
  [42n, [0.6394267984578837, 0.025010755222666936, 0.27502931836911926], [96964, 3792, 41706, 33848, 111680, 102616, 135292, 13183]],
  [2n ** 32n, [0.11299430095636409, 0.41782886486292836, 0.016676366499229101], [17134, 63360, 2528, 92763, 122170, 50271, 82737, 68514]],
];

describe("seedKey", () => {
  test("splits abs(seed) into 32-bit words, least-significant first", () => {
    expect(Array.from(seedKey(0n))).toEqual([0]);
    expect(Array.from(seedKey(42n))).toEqual([42]);
    expect(Array.from(seedKey(-42n))).toEqual([42]);
    expect(Array.from(seedKey(2n ** 32n))).toEqual([0, 1]);
    expect(Array.from(seedKey(2n ** 64n + 5n))).toEqual([5, 0, 1]);
    expect(Array.from(seedKey(0xffffffffn))).toEqual([0xffffffff]);
  });
});

describe("PyRandom matches CPython", () => {
  test.each(PROTOCOL_TABLE)("protocol.md vectors for seed %p", (seed, firstRandoms, firstChoices) => {
    expect(randoms(seed, 3)).toEqual(firstRandoms);
    expect(choices(seed, 151643, 8)).toEqual(firstChoices);
  });

  test.each(vectors.cases.map((c) => [c.seed, c] as const))("generated vectors for seed %s", (_seed, c) => {
    const seed = BigInt(c.seed);
    expect(randoms(seed, c.random.length)).toEqual(c.random);
    expect(choices(seed, 151643, c.choices151643.length)).toEqual(c.choices151643);
  });

  test("seed -42 gives the same stream as 42", () => {
    expect(randoms(-42n, 50)).toEqual(randoms(42n, 50));
    expect(randoms(43n, 3)).not.toEqual(randoms(42n, 3));
  });

  test("random() across the first block regeneration", () => {
    const { seed, random } = vectors.acrossBlock;
    expect(random.length).toBeGreaterThan(312);
    expect(randoms(BigInt(seed), random.length)).toEqual(random);
  });

  test("5000 draws from range(1000) with seed 42: sum and last five", () => {
    const { seed, n, k, sum, lastFive } = vectors.longRun;
    expect(sum).toBe(2499274);
    expect(lastFive).toEqual([608, 316, 525, 995, 353]);
    const drawn = choices(BigInt(seed), n, k);
    expect(drawn.reduce((a, b) => a + b, 0)).toBe(sum);
    expect(drawn.slice(-5)).toEqual(lastFive);
  });

  test("1500 draws across several blocks, every id", () => {
    const { seed, n, k, ids } = vectors.fullRun;
    expect(k).toBeGreaterThan(624 * 2);
    expect(choices(BigInt(seed), n, k)).toEqual(ids);
  });
});

describe("choicesInto", () => {
  test("writes exactly k draws at offset and leaves the rest untouched", () => {
    const out = new Uint32Array(12).fill(7777);
    new PyRandom(42n).choicesInto(range(151643), out, 2, 8);
    expect(Array.from(out.subarray(2, 10))).toEqual(PROTOCOL_TABLE[2]![2]);
    expect([out[0], out[1], out[10], out[11]]).toEqual([7777, 7777, 7777, 7777]);
  });

  test("maps indices through the population", () => {
    const population = Uint32Array.from({ length: 151643 }, (_, i) => i * 2 + 1);
    const out = new Uint32Array(8);
    new PyRandom(0n).choicesInto(population, out, 0, 8);
    expect(Array.from(out)).toEqual(PROTOCOL_TABLE[0]![2].map((i) => i * 2 + 1));
  });

  test("k <= 0 consumes nothing", () => {
    const rng = new PyRandom(1n);
    const out = new Uint32Array(4);
    rng.choicesInto(range(10), out, 0, 0);
    rng.choicesInto(range(10), out, 0, -3);
    // Nothing to draw from an empty population either: Python's choices(k=0) does not look at it.
    rng.choicesInto(new Uint32Array(0), out, 0, 0);
    expect(rng.random()).toBe(0.13436424411240122);
  });

  test("consecutive calls continue one stream", () => {
    const rng = new PyRandom(42n);
    const out = new Uint32Array(5000);
    rng.choicesInto(range(1000), out, 0, 1234);
    rng.choicesInto(range(1000), out, 1234, 5000 - 1234);
    expect(Array.from(out)).toEqual(choices(42n, 1000, 5000));
  });

  test("rejects draws that do not fit and an empty population", () => {
    expect(() => new PyRandom(1n).choicesInto(range(10), new Uint32Array(4), 2, 3)).toThrow("do not fit");
    expect(() => new PyRandom(1n).choicesInto(range(10), new Uint32Array(4), -1, 2)).toThrow("do not fit");
    expect(() => new PyRandom(1n).choicesInto(new Uint32Array(0), new Uint32Array(4), 0, 1)).toThrow("empty");
  });
});
