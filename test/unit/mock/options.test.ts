/** `warmbench mock` flags through citty's own parser into MockOptions. */
import { describe, expect, test } from "bun:test";
import { parseArgs } from "citty";
import type { MockRawFlags as RawFlags } from "../../../src/mock/options.ts";
import { MOCK_DEFAULTS, MOCK_FLAGS, mockOptions, parseMockOptions } from "../../../src/mock/options.ts";
import { argsOf } from "../../../src/cli/flags.ts";

const MOCK_ARGS = argsOf("mock");
import { UsageError } from "../../../src/errors.ts";

const parse = (argv: string[]) => parseMockOptions(parseArgs(argv, MOCK_ARGS) as unknown as RawFlags);

describe("parseMockOptions", () => {
  test("no flags gives the defaults, faults off", () => {
    expect(parse([])).toEqual(mockOptions());
    expect(mockOptions()).toMatchObject({
      failEvery: 0,
      stallS: 5,
      slowHeadersMs: 0,
      exitAfter: 0,
      truthFile: null,
      noGenerate: false,
      noMetrics: false,
      noDevMode: false,
    });
  });

  test("every fault flag lands in its option", () => {
    const opts = parse([
      "--fail-every",
      "2",
      "--error-event-every",
      "3",
      "--abort-every",
      "4",
      "--reset-every",
      "5",
      "--stall-every",
      "6",
      "--stall-s",
      "0.5",
      "--slow-headers-ms",
      "250",
      "--malformed-every",
      "7",
      "--invalid-utf8-every",
      "8",
      "--flush-fail-first",
      "9",
      "--exit-after",
      "10",
      "--flush-lies",
      "--truth",
      "/tmp/t.jsonl",
      "--no-generate",
      "--no-dev-mode",
      "--no-metrics",
    ]);
    expect(opts).toMatchObject({
      failEvery: 2,
      errorEventEvery: 3,
      abortEvery: 4,
      resetEvery: 5,
      stallEvery: 6,
      stallS: 0.5,
      slowHeadersMs: 250,
      malformedEvery: 7,
      invalidUtf8Every: 8,
      flushFailFirst: 9,
      exitAfter: 10,
      flushLies: true,
      truthFile: "/tmp/t.jsonl",
      noGenerate: true,
      noDevMode: true,
      noMetrics: true,
    });
  });

  test("the cache behaviours: defaults are today's, each flag picks another legal one", () => {
    expect(mockOptions()).toMatchObject({ insertAt: "prefill", inflightPages: "evictable", noOutputCache: false, faultForgetEvery: 0 });
    expect(parse(["--insert-at", "finish", "--inflight-pages", "locked", "--no-output-cache", "--fault-forget-every", "3"])).toMatchObject({
      insertAt: "finish",
      inflightPages: "locked",
      noOutputCache: true,
      faultForgetEvery: 3,
    });
    expect(parse(["--insert-at", "prefill", "--inflight-pages", "evictable"])).toEqual(mockOptions());
    for (const [argv, message] of [
      [["--insert-at", "decode"], '--insert-at: "decode" is not supported (choose from: prefill, finish)'],
      [["--inflight-pages", "pinned"], '--inflight-pages: "pinned" is not supported (choose from: evictable, locked)'],
      [["--fault-forget-every", "-2"], "--fault-forget-every: must be >= 0"],
    ] as const) {
      expect(() => parse([...argv])).toThrow(UsageError);
      expect(() => parse([...argv])).toThrow(message);
    }
  });

  test("every option has a default and a flag", () => {
    const flags = new Set(MOCK_FLAGS.map((f) => f.name));
    for (const key of Object.keys(MOCK_DEFAULTS)) {
      const flag = key === "truthFile" ? "truth" : key.replace(/[A-Z0-9]/g, (c) => `-${c.toLowerCase()}`).replace("utf-8", "utf8");
      expect(flags.has(flag)).toBe(true);
    }
  });

  test("bad values are usage errors naming the flag", () => {
    for (const [argv, flag] of [
      [["--fail-every", "-1"], "--fail-every"],
      [["--stall-s", "soon"], "--stall-s"],
      [["--exit-after", "1.5"], "--exit-after"],
      [["--truth", ""], "--truth"],
      [["--slow-headers-ms", "-5"], "--slow-headers-ms"],
    ] as const) {
      expect(() => parse([...argv])).toThrow(UsageError);
      expect(() => parse([...argv])).toThrow(flag);
    }
  });
});
