/**
 * `warmbench replay TRACE` end to end: the compiled binary against an in-process mock, on traces this test writes in
 * the Mooncake format (shared system prompts, multi-turn chains continuing a partial block, two conversations
 * starting at one timestamp). The prompts on the wire are the dumped ones, exactly input_length ids, sharing exactly
 * the blocks their hash ids share; with a large cache every request's cached tokens fall in its predicted range;
 * with a small one the LRU model's predicted losses match the observed shortfall; the schedule follows the scaled
 * timestamps; --analyze gives the hit ratio this test computes on its own; bad input exits 2 naming the line.
 */
import { formatJsonl } from "../../src/report/jsonl.ts";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import type { ReceivedRequest } from "../../src/mock/types.ts";
import { generateTrace, infiniteHitRatio, traceText } from "../helpers/mooncake-trace.ts";
import { readJsonl } from "../helpers/results.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-replay-"));
const B = 64;
const lines = generateTrace({
  blockSize: B,
  systems: 2,
  systemBlocks: 3,
  conversations: 8,
  turns: 4,
  maxTurnTokens: 150,
  turnGapMs: 2000,
  startGapMs: 700,
  outputLength: 4,
  seed: 5,
});
const tracePath = join(dir, "trace.jsonl");
writeFileSync(tracePath, traceText(lines));
let n = 0;

interface Replay extends CliResult {
  points: any[];
  details: any[];
  dump: any[];
  received: ReceivedRequest[];
}

async function replay(mock: Partial<MockOptions>, args: string[], trace = tracePath): Promise<Replay> {
  const server = await startMockServer(mockOptions({ port: 0, pageSize: 1, ttftBaseMs: 1, prefillUsPerToken: 5, itlMs: 1, recordInputs: true, ...mock }));
  const k = ++n;
  const [out, det, dump] = ["o", "d", "p"].map((f) => join(dir, `${f}-${k}.jsonl`));
  try {
    const r = await runCli([
      "replay",
      trace,
      "--block-size",
      String(B),
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--settle",
      "0",
      "--window",
      "2",
      "--output-file",
      out!,
      "--request-details",
      det!,
      "--dump-prompts",
      dump!,
      ...args,
    ]);
    const received = (await (await fetch(`${server.url}/mock/received`)).json()) as ReceivedRequest[];
    const read = (p: string) => (existsSync(p) ? readJsonl(p) : []);
    return { ...r, points: read(out!), details: read(det!), dump: read(dump!), received };
  } finally {
    await server.stop();
  }
}

/** Leading equal elements of two arrays. */
function common(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe("replay against the mock with a cache larger than the trace", () => {
  let r: Replay;
  test("runs with strict verification; one line per 2-s window and one for the whole replay, all schema-valid", async () => {
    r = await replay({ cacheTokens: 1_000_000 }, ["--time-scale", "0.2", "--verify-cache", "strict"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    const windows = [...new Set(lines.map((l) => Math.floor(l.timestamp / 2000)))];
    expect(r.points.map((p) => p.window)).toEqual([...windows, undefined]);
    for (const p of r.points) expect(schemaProblems(p)).toEqual([]);
    const whole = r.points.at(-1)!;
    expect(whole.completed).toBe(lines.length);
    expect(whole.cache_check).toBe("ok");
    expect(whole.cache_short_requests).toBe(0);
    expect(whole.cache_over_requests).toBe(0);
    expect(whole.block_size).toBe(B);
    expect(whole.time_scale).toBe(0.2);
    expect(r.points.reduce((a, p) => a + (p.window === undefined ? 0 : p.completed), 0)).toBe(lines.length);
  });

  test("the whole replay counts each request once, and the report shows one replay as one run with its windows", async () => {
    // 0.3: the whole line's ttft_model.n was 160 for 80 requests (windows and the whole both counted), and the report
    // showed one replay as one run per window rate, labelled @ 18.174383206869916 req/s.
    const whole = r.points.at(-1)!;
    expect(whole.ttft_model.n).toBe(lines.length);
    expect(whole.evidence.requests).toEqual({ planned: lines.length, sent: lines.length, finished: lines.length });
    const file = join(dir, "whole.jsonl");
    writeFileSync(file, r.points.map((p) => formatJsonl(p)).join(""));
    const md = join(dir, "whole.md");
    const rep = await runCli(["report", file, "--md", md]);
    expect(rep.code).toBe(0);
    const runsTable = readFileSync(md, "utf8")
      .split("### Runs")[1]!
      .split("\n")
      .filter((l) => l.startsWith("| whole.jsonl"));
    expect(runsTable).toHaveLength(1);
    expect(readFileSync(md, "utf8")).toContain("| whole.jsonl | ");
    expect(readFileSync(md, "utf8")).toMatch(/\| whole\.jsonl \| \d+% window 0 \|/);
    expect(readFileSync(md, "utf8")).toMatch(/\| whole\.jsonl \| \d+% whole trace \|/);
    expect(readFileSync(md, "utf8")).not.toMatch(/req\/s\b[^|]*\d\.\d{5,}/);
  });

  test("the prompts on the wire are the dumped ones: exactly input_length ids, sharing exactly the blocks their hash ids share", () => {
    expect(r.dump).toHaveLength(lines.length);
    expect(lines.some((l) => l.input_length % B !== 0)).toBe(true);
    const wire = new Map(r.received.filter((q) => q.maxNewTokens === 4).map((q) => [q.inputIds.join(","), q]));
    r.dump.forEach((d, i) => {
      const l = lines[i]!;
      expect(d.input_ids).toHaveLength(l.input_length);
      expect(d.hash_ids).toEqual(l.hash_ids);
      expect(wire.has(d.input_ids.join(","))).toBe(true);
    });
    let sharing = 0;
    for (let a = 0; a < lines.length; a++) {
      for (let b = 0; b < a; b++) {
        const j = common(lines[a]!.hash_ids, lines[b]!.hash_ids);
        const tokens = common(r.dump[a]!.input_ids, r.dump[b]!.input_ids);
        expect(tokens).toBe(Math.min(j * B, lines[a]!.input_length, lines[b]!.input_length));
        if (j > 0 && tokens % B !== 0) sharing++;
      }
    }
    // Multi-turn chains share a partial block: the share ends inside it.
    expect(sharing).toBeGreaterThan(0);
  });

  test("every request's observed cached tokens fall in its predicted range; most are predicted exactly", () => {
    expect(r.details).toHaveLength(lines.length);
    let exact = 0;
    for (const d of r.details) {
      expect(d.cache_verdict).toBe("ok");
      expect(d.cached_tokens).toBeGreaterThanOrEqual(d.expected_cached_tokens_lower);
      expect(d.cached_tokens).toBeLessThanOrEqual(d.expected_cached_tokens_upper);
      if (d.expected_cached_tokens_lower === d.expected_cached_tokens_upper) exact++;
      expect(d.predicted_eviction_tokens).toBe(0);
    }
    expect(exact).toBeGreaterThan(lines.length / 2);
    expect(r.details.filter((d) => d.cached_tokens > 0).length).toBeGreaterThan(lines.length / 2);
  });

  test("the achieved schedule follows the scaled timestamps", () => {
    const t0 = r.details[0]!.intended_epoch_ms;
    for (const d of r.details) {
      expect(d.intended_epoch_ms - t0).toBeCloseTo((d.timestamp_ms - lines[0]!.timestamp) * 0.2, 0);
      expect(d.start_epoch_ms - d.intended_epoch_ms).toBeLessThan(250);
    }
    expect(r.points.at(-1)!.schedule_lag_median_ms).toBeLessThan(50);
  });
});

describe("replay with the mock's cache below the working set", () => {
  // One at a time in trace order the model sees the server's order exactly; on the trace's own schedule (requests
  // overlap) the server's eviction order among them can differ from the model's, within the stated tolerance.
  const cases: Array<[string, string[], number]> = [
    ["closed loop, one at a time", ["--ignore-timestamps", "--max-concurrency", "1"], 0.02],
    ["the trace's schedule at time scale 0.2", ["--time-scale", "0.2"], 0.1],
  ];
  for (const [name, args, tolerance] of cases) {
    test(`${name}: the LRU model's predicted losses match the observed shortfall within ${tolerance * 100} % of the infinite cache's hits`, async () => {
      const r = await replay({ cacheTokens: 1200 }, args);
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      const whole = r.points.at(-1)!;
      expect(whole.cache_capacity_tokens).toBe(1200);
      expect(whole.working_set_tokens).toBeGreaterThan(1200);
      const infinite = whole.infinite_hit_ratio * whole.total_input;
      expect(whole.observed_shortfall_tokens).toBeGreaterThan(0.1 * infinite);
      expect(whole.predicted_eviction_tokens).toBeGreaterThan(0.1 * infinite);
      expect(Math.abs(whole.predicted_eviction_tokens - whole.observed_shortfall_tokens)).toBeLessThanOrEqual(tolerance * infinite);
      expect(whole.eviction).toBe(true);
    });
  }
});

describe("replay --cache-tokens", () => {
  test("the line judges the working set against the capacity the model evicts at, not the server's", async () => {
    const r = await replay({ cacheTokens: 100_000_000 }, ["--ignore-timestamps", "--max-concurrency", "1", "--cache-tokens", "1200"]);
    if (r.code !== 0) console.error(r.stderr);
    const whole = r.points.at(-1)!;
    expect(whole.cache_capacity_tokens).toBe(100_000_000);
    expect(whole.working_set_tokens).toBeGreaterThan(1200);
    expect(whole.working_set_fits).toBe(false);
    expect(whole.predicted_eviction_tokens).toBeGreaterThan(0);
  });
});

describe("replay --analyze", () => {
  test("the infinite-cache hit ratio is the one this test computes from the hash ids", async () => {
    const out = join(dir, "analysis.json");
    for (const page of [1, 16]) {
      const r = await runCli([
        "replay",
        tracePath,
        "--analyze",
        "--block-size",
        String(B),
        "--page-size",
        String(page),
        "--window",
        "2",
        "--cache-tokens",
        "1000",
        "--output-file",
        out,
      ]);
      expect(r.code).toBe(0);
      const a = JSON.parse(readFileSync(out, "utf8"));
      expect(a.requests).toBe(lines.length);
      expect(a.infinite_hit_ratio).toBeCloseTo(infiniteHitRatio(lines, B, page), 12);
      expect(a.lru_hit_ratio).toBeLessThan(a.infinite_hit_ratio);
      expect(a.windows.reduce((s: number, w: any) => s + w.requests, 0)).toBe(lines.length);
      expect(r.stdout).toContain(`Hit ratio of an infinite cache: ${a.infinite_hit_ratio.toFixed(4)}`);
    }
  });
});

describe("bad input: exit 2 naming the file and line, before anything is sent", () => {
  const bad = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const good = traceText(lines.slice(0, 3)).trimEnd().split("\n");
  const cases: Array<[string, string, RegExp]> = [
    ["malformed", [...good, "{oops", ""].join("\n"), /malformed\.jsonl:4: not JSON/],
    [
      "short-ids",
      [...good, JSON.stringify({ ...lines[3]!, hash_ids: lines[3]!.hash_ids.slice(1) })].join("\n"),
      /short-ids\.jsonl:4: input_length \d+ needs ceil\(\d+\/64\) = \d+ hash ids/,
    ],
    [
      "back-in-time",
      [...good, JSON.stringify({ ...lines[3]!, timestamp: -1 + lines[2]!.timestamp - 1 })].join("\n"),
      /back-in-time\.jsonl:4: timestamp \d+ ms is before the previous request's \d+ ms/,
    ],
  ];
  for (const [name, text, re] of cases) {
    test(name, async () => {
      // Nothing listens on port 9: a request would fail with exit 1, not 2.
      const r = await runCli([
        "replay",
        bad(`${name}.jsonl`, text),
        "--block-size",
        String(B),
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        "http://127.0.0.1:9",
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(re);
      const a = await runCli(["replay", join(dir, `${name}.jsonl`), "--block-size", String(B), "--analyze"]);
      expect(a.code).toBe(2);
      expect(a.stderr).toMatch(re);
    });
  }

  test("--skip-invalid drops and counts the bad lines", async () => {
    const p = bad("mixed.jsonl", [...good, "{oops", JSON.stringify({ ...lines[3]!, hash_ids: [] })].join("\n"));
    const r = await runCli(["replay", p, "--block-size", String(B), "--analyze", "--skip-invalid"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/--skip-invalid: 2 \(1 malformed, 1 hash_ids_length\) line\(s\) of .*mixed\.jsonl dropped/);
    expect(r.stdout).toContain("3 requests");
  });

  test("a request longer than the model's context (from /server_info) is refused by line", async () => {
    const r = await replay({ cacheTokens: 1_000_000, contextLength: 500 }, []);
    expect(r.code).toBe(2);
    const first = lines.findIndex((l) => l.input_length + l.output_length > 500);
    expect(r.stderr).toContain(
      `trace.jsonl:${first + 1}: input_length ${lines[first]!.input_length} + output_length 4 exceeds the model's context of 500 tokens`,
    );
    expect(r.received.filter((q) => q.maxNewTokens === 4)).toHaveLength(0);
  });
});

describe("SIGINT mid-replay", () => {
  test("writes the windows measured so far, interrupted, and exits 130", async () => {
    const server = await startMockServer(mockOptions({ port: 0, pageSize: 1, ttftBaseMs: 1, itlMs: 1, cacheTokens: 1_000_000 }));
    const out = join(dir, "interrupted.jsonl");
    try {
      const proc = Bun.spawn(
        [
          BINARY,
          "replay",
          tracePath,
          "--block-size",
          String(B),
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          server.url,
          "--settle",
          "0",
          "--window",
          "2",
          "--output-file",
          out,
        ],
        {
          stdout: "pipe",
          stderr: "pipe",
          env: { ...process.env, NO_COLOR: "1" },
        },
      );
      // The trace spans 8 s at scale 1: stop it after about 3.
      await Bun.sleep(3500);
      proc.kill("SIGINT");
      expect(await proc.exited).toBe(130);
      const points = readJsonl(out);
      expect(points.length).toBeGreaterThan(1);
      const whole = points.at(-1)!;
      expect(whole.window).toBeUndefined();
      expect(whole.interrupted).toBe(true);
      expect(whole.completed).toBeLessThan(lines.length);
      expect(whole.completed).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });
});
