import { describe, expect, test } from "bun:test";
import type { GreedyAnswer } from "../../../src/backends/greedy-answer.ts";
import { compareAnswers, fidelityGroup } from "../../../src/metrics/fidelity.ts";

/** An answer of ids with, per position, its top list (id -> logprob). */
const answer = (ids: number[], tops: Array<Record<number, number>> | null): GreedyAnswer => ({
  tokens: ids.map((id) => `id:${id}`),
  chosenLogprob: ids.map(() => null),
  top: tops === null ? null : tops.map((t) => new Map(Object.entries(t).map(([id, lp]) => [`id:${id}`, lp]))),
  cachedTokens: 0,
});

describe("compareAnswers", () => {
  const cold = answer([1, 2, 3], [{ 1: -0.1, 9: -3 }, { 2: -0.1, 4: -0.12 }, { 3: -0.1 }]);
  test("the same tokens are identical", () => {
    expect(compareAnswers(cold, cold, 0.1)).toEqual({ verdict: "identical", position: null, gapNats: null, why: null });
  });
  test("a flip between two tokens each in the other's top list, within the threshold, is a near tie at its position", () => {
    const warm = answer([1, 4, 7], [{ 1: -0.1 }, { 4: -0.1, 2: -0.13 }, { 7: -0.1 }]);
    const c = compareAnswers(cold, warm, 0.1);
    expect(c.verdict).toBe("near_tie");
    expect(c.position).toBe(1);
    expect(c.gapNats).toBeCloseTo(0.03, 10);
    // The same flip with a threshold below its gap is a divergence.
    expect(compareAnswers(cold, warm, 0.01).verdict).toBe("diverged");
  });
  test("a token the cold answer did not even rank is a divergence, whatever the threshold", () => {
    const warm = answer([1, 8, 3], [{ 1: -0.1 }, { 8: -0.1, 2: -5 }, { 3: -0.1 }]);
    expect(compareAnswers(cold, warm, 100)).toMatchObject({ verdict: "diverged", position: 1, gapNats: null });
  });
  test("without top log-probabilities a difference is unclassified, with the reason", () => {
    const c = compareAnswers(answer([1, 2], null), answer([1, 5], null), 0.1);
    expect(c).toMatchObject({ verdict: "unclassified", position: 1 });
    expect(c.why).toMatch(/no top log-probabilities/);
  });
  test("an answer that ended early diverged where it ended", () => {
    expect(compareAnswers(cold, answer([1, 2], [{ 1: -0.1 }, { 2: -0.1 }]), 0.1)).toMatchObject({ verdict: "diverged", position: 2 });
  });
});

describe("fidelityGroup", () => {
  test("counts per verdict, the positions ascending, the largest gap, and why samples were not compared", () => {
    const g = fidelityGroup(
      [
        { verdict: "identical", position: null, gapNats: null, why: null },
        { verdict: "near_tie", position: 7, gapNats: 0.02, why: null },
        { verdict: "diverged", position: 1, gapNats: 2.5, why: null },
      ],
      ["the warm answer found 0 tokens cached, fewer than the prefix's 64"],
    );
    expect(g).toEqual({
      fidelity_checked: 3,
      fidelity_identical: 1,
      fidelity_near_tie: 1,
      fidelity_diverged: 1,
      fidelity_unclassified: 0,
      fidelity_unproven: 1,
      fidelity_first_divergence: [1, 7],
      fidelity_max_gap_nats: 2.5,
      fidelity_note: "1 sample(s) not counted: the warm answer found 0 tokens cached, fewer than the prefix's 64",
    });
  });

  test("nothing compared: the counts are null, not 0 (a check that never looked found no divergence only by not looking)", () => {
    const g = fidelityGroup([], ["0% has no prefix to reuse"]);
    expect(g).toMatchObject({
      fidelity_checked: 0,
      fidelity_identical: null,
      fidelity_near_tie: null,
      fidelity_diverged: null,
      fidelity_unclassified: null,
      fidelity_unproven: 1,
      fidelity_max_gap_nats: null,
    });
  });
});
