/** The prompt worker through its feed (a real Worker thread, from source): the script's prompts, bounded look-ahead. */
import { afterEach, describe, expect, test } from "bun:test";
import { buildPrompts, formatPromptDump, serializeIds, suffixIds } from "../../../src/workload/prompts.ts";
import { joinDigits } from "../../../src/workload/prompt-draw.ts";
import { PromptFeed, type FedPrompt, type PromptPass } from "../../../src/workload/prompt-feed.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

const POPULATION = Uint32Array.from({ length: 32_000 }, (_, i) => i * 3);
const decoder = new TextDecoder();
let feed: PromptFeed | null = null;

afterEach(async () => {
  await feed?.close();
  feed = null;
});

/** A sink for the worker's dump batches. */
function collector(): { take: (bytes: Uint8Array) => void; text: () => string; batches: () => number } {
  const got: Uint8Array[] = [];
  return { take: (bytes) => void got.push(bytes), text: () => Buffer.concat(got).toString("utf8"), batches: () => got.length };
}

/** Takes every prompt of a pass, in order, as they arrive. */
async function drain(pass: PromptPass): Promise<FedPrompt[]> {
  const out: FedPrompt[] = [];
  for (let i = 0; i < pass.count; i++) {
    while (!pass.ready(i)) {
      if (pass.failure) throw pass.failure;
      await new Promise<void>((resolve) => pass.onArrival(resolve));
    }
    const { prompt, release } = pass.take();
    release();
    out.push(prompt);
  }
  return out;
}

describe("PromptFeed", () => {
  test("two pcts, two passes each: every pass holds the script's prompts, and the next pct continues the script's draws", async () => {
    const rng = new PyRandom(42n);
    const expected = [30, 70].map((pct) => buildPrompts({ population: POPULATION, totalTokens: 2000, pct, numPrompts: 6, rng }));
    feed = new PromptFeed(POPULATION, 42n);
    for (const set of expected) {
      const drawn = await feed.startPct({ pct: set.pct, totalTokens: 2000, workingSet: 1, count: 6, headLen: 65, dump: null });
      expect([...drawn.prefixes[0]!]).toEqual([...set.prefix]);
      expect(decoder.decode(drawn.prefixDigits[0])).toBe(decoder.decode(serializeIds(set.prefix)));
      // The same fingerprint as the whole set drawn at once, without a suffix drawn.
      expect(drawn.idsHash).toBe(set.idsHash);
      for (const count of [6, 4]) {
        const prompts = await drain(feed.openPass(count));
        expect(prompts.map((p) => p.index)).toEqual([...Array(count).keys()]);
        prompts.forEach((p, i) => {
          expect(decoder.decode(joinDigits(p.chunks))).toBe(decoder.decode(serializeIds(suffixIds(set, i))));
          // The head covers what the prefix does not of the probe's 65 ids.
          expect([...p.head]).toEqual([...suffixIds(set, i).subarray(0, Math.max(0, 65 - set.prefixLen))]);
        });
      }
    }
  });

  test("--dump-prompts: drawn by the worker, handed to the sink as formatPromptDump writes it, before the pct resolves", async () => {
    const dump = collector();
    const set = buildPrompts({ population: POPULATION, totalTokens: 500, pct: 50, numPrompts: 7, rng: new PyRandom(5n) });
    feed = new PromptFeed(POPULATION, 5n);
    await feed.startPct({ pct: 50, totalTokens: 500, workingSet: 1, count: 7, headLen: 65, dump: dump.take });
    expect(dump.text()).toBe(formatPromptDump(set));
  });

  test("--dump-prompts larger than the worker's write batch: every batch lands once, in order", async () => {
    const dump = collector();
    const set = buildPrompts({ population: POPULATION, totalTokens: 6000, pct: 10, numPrompts: 400, rng: new PyRandom(6n) });
    const expected = formatPromptDump(set);
    // Several 4 MiB batches and a partial one.
    expect(expected.length).toBeGreaterThan(9 << 20);
    feed = new PromptFeed(POPULATION, 6n);
    await feed.startPct({ pct: 10, totalTokens: 6000, workingSet: 1, count: 400, headLen: 65, dump: dump.take });
    expect(dump.batches()).toBeGreaterThan(2);
    const written = dump.text();
    expect(written.length).toBe(expected.length);
    expect(written === expected).toBe(true);
  });

  test("a working set of 3 and a shard's share: its prompts, with the prefix each shares; the dump names the prefix", async () => {
    const dump = collector();
    const set = buildPrompts({ population: POPULATION, totalTokens: 600, pct: 40, numPrompts: 10, rng: new PyRandom(9n), workingSet: 3 });
    feed = new PromptFeed(POPULATION, 9n);
    const drawn = await feed.startPct({ pct: 40, totalTokens: 600, workingSet: 3, count: 10, headLen: 65, dump: dump.take });
    expect(drawn.prefixes.map((p) => [...p])).toEqual(set.prefixes.map((p) => [...p]));
    expect(drawn.idsHash).toBe(set.idsHash);
    expect(dump.text()).toBe(formatPromptDump(set));
    // Shard 1 of 3 sends prompts 1, 4, 7 of the first 9.
    const prompts = await drain(feed.openPass({ count: 9, first: 1, step: 3 }));
    expect(prompts.length).toBe(3);
    prompts.forEach((p, k) => {
      expect(p.index).toBe(k);
      expect(decoder.decode(joinDigits(p.chunks))).toBe(decoder.decode(serializeIds(suffixIds(set, 1 + 3 * k))));
    });
    // A share that starts past the line's end holds nothing.
    expect((await drain(feed.openPass({ count: 2, first: 2, step: 3 }))).length).toBe(0);
  });

  test("the look-ahead stops at its limits until prompts are taken and released", async () => {
    feed = new PromptFeed(POPULATION, 1n);
    await feed.startPct({ pct: 0, totalTokens: 1000, workingSet: 1, count: 100, headLen: 0, dump: null });

    const byCount = feed.openPass(100, { prompts: 5, bytes: 1 << 30 });
    await byCount.filled();
    await Bun.sleep(50); // nothing more arrives, however long we wait
    const first = takeReady(byCount, 0);
    expect(first.length).toBe(5);
    for (const release of first) release();
    expect(byCount.ready(5)).toBe(false);
    await byCount.filled();
    expect(takeReady(byCount, 5).length).toBe(5);

    // By bytes: 1000 ids of 4-6 bytes each per prompt, so 20 kB holds at most three.
    const byBytes = feed.openPass(100, { prompts: 1000, bytes: 20_000 });
    await byBytes.filled();
    await Bun.sleep(50);
    const held = takeReady(byBytes, 0);
    expect(held.length).toBeGreaterThanOrEqual(2);
    expect(held.length).toBeLessThanOrEqual(3);
    // Taken but not released (bodies still being sent) still counts: nothing more comes until they are sent.
    await byBytes.filled();
    await Bun.sleep(50);
    expect(byBytes.ready(held.length)).toBe(false);
    for (const release of held) release();
    await byBytes.filled();
    expect(byBytes.ready(held.length)).toBe(true);

    // A prompt larger than the whole limit still comes, one at a time, when nothing else is held.
    const huge = feed.openPass(3, { prompts: 1000, bytes: 100 });
    await huge.filled();
    const one = takeReady(huge, 0);
    expect(one.length).toBe(1);
    await Bun.sleep(50);
    expect(huge.ready(1)).toBe(false);
    one[0]!();
    await huge.filled();
    expect(huge.ready(1)).toBe(true);
  });
});

/** Takes every prompt that has arrived, from `from` on; returns their release callbacks. */
function takeReady(pass: PromptPass, from: number): Array<() => void> {
  const releases: Array<() => void> = [];
  for (let i = from; pass.ready(i); i++) releases.push(pass.take().release);
  return releases;
}
