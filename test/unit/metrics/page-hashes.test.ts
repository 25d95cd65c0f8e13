import { describe, expect, test } from "bun:test";
import { pageChainHashes } from "../../../src/metrics/page-hashes.ts";

describe("pageChainHashes", () => {
  const a = Array.from({ length: 50 }, (_, i) => 1000 + i);
  test("prompts share leading ids exactly as far as they share whole pages", () => {
    const b = [...a.slice(0, 35), 7, 7, 7, 7, 7];
    const ha = pageChainHashes(a, 16);
    const hb = pageChainHashes(b, 16);
    expect(ha.slice(0, 2)).toEqual(hb.slice(0, 2));
    expect(ha[2]).not.toBe(hb[2]);
  });
  test("a partial page is not the whole page it starts, and every id is a safe integer", () => {
    expect(pageChainHashes(a.slice(0, 20), 16)[1]).not.toBe(pageChainHashes(a.slice(0, 32), 16)[1]);
    for (const h of pageChainHashes(a, 1)) expect(Number.isSafeInteger(h)).toBe(true);
    expect(new Set(pageChainHashes(a, 1)).size).toBe(50);
  });
});
