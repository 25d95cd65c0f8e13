/**
 * The page size from the answers: exact where one page size fits every (shared k -> cached) answer, and where more
 * than one does (a short llama.cpp slot context leaves only small k to ask), ambiguous with the candidates named and
 * none picked: a passport that took the first consistent one would hand a guess to --passport as a measurement.
 */
import { describe, expect, test } from "bun:test";
import { pageSizeFromAnswers } from "../../../src/passport/page-size.ts";

const SHARED = [1023, 1001, 777, 513, 389, 257, 193, 131, 97, 65, 47, 33, 23, 17, 11, 9, 7, 5, 3];
const paged = (page: number, ks: readonly number[]): Array<[number, number]> => ks.map((k) => [k, Math.floor(k / page) * page]);

describe("pageSizeFromAnswers", () => {
  test("every page size up to 1024 is found exactly from the full set of k", () => {
    for (const page of [1, 2, 3, 16, 64, 100, 256, 1000, 1024]) {
      const figure = pageSizeFromAnswers(paged(page, SHARED), "m");
      expect(figure.value, `page ${page}`).toBe(page);
      expect(figure.uncertainty).toStartWith("exact");
    }
  });

  test("answers that fit two page sizes: ambiguous, both named, none picked", () => {
    // Only k = 3 fits a 28-token slot context: 3 cached is page 1 or page 3.
    const figure = pageSizeFromAnswers([[3, 3]], "m");
    expect(figure.value).toBeNull();
    expect(figure.uncertainty).toBe("ambiguous: one of 1, 3");
    expect(figure.why).toContain("ambiguous: page sizes 1, 3 all explain the answers (shared->cached: 3->3)");
  });

  test("few k: exact where they still fix one page size, ambiguous where they do not", () => {
    expect(pageSizeFromAnswers(paged(4, [11, 9, 7, 5]), "m").value).toBe(4);
    // 7 -> 6 and 5 -> 4 fit page 2 only (page 3: 5 -> 3); 9 -> 8 alone fits 2, 4 and 8.
    expect(pageSizeFromAnswers(paged(2, [7, 5]), "m").value).toBe(2);
    const nine = pageSizeFromAnswers([[9, 8]], "m");
    expect(nine.value).toBeNull();
    expect(nine.uncertainty).toBe("ambiguous: one of 2, 4, 8");
  });

  test("answers no page size explains: none, saying so", () => {
    const figure = pageSizeFromAnswers(
      [
        [7, 6],
        [5, 5],
      ],
      "m",
    );
    expect(figure.value).toBeNull();
    expect(figure.uncertainty).toBeNull();
    expect(figure.why).toContain("no page size up to 1024 explains");
  });
});
