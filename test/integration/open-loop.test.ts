/**
 * Open-loop load through the compiled binary against the mock: Poisson and gamma arrivals, a rate sweep, latency
 * from the intended send time when the client's slots are full, prompts that do not depend on the rate, --duration,
 * and memory that does not follow the number of prompts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-open-loop-"));
const mocks: Array<{ stop(): Promise<void> }> = [];
afterAll(async () => {
  for (const m of mocks) await m.stop();
});

async function mock(over: Partial<MockOptions> = {}) {
  const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, ...over }));
  mocks.push(m);
  return m;
}

const small = (url: string, extra: string[]) => [
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  url,
  "--total-tokens",
  "16",
  "--output-len",
  "1",
  "--settle",
  "0",
  "--pcts",
  "0",
  ...extra,
];

function gapStats(timesMs: number[]): { mean: number; cv: number } {
  const sorted = [...timesMs].sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((t, i) => t - sorted[i]!);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
  return { mean, cv: sd / mean };
}

/** CV of the spans of `width` consecutive gaps (non-overlapping) of the sorted times. */
function windowCv(timesMs: number[], width: number): number {
  const sorted = [...timesMs].sort((a, b) => a - b);
  const spans: number[] = [];
  for (let i = 0; i + width < sorted.length; i += width) spans.push(sorted[i + width]! - sorted[i]!);
  const mean = spans.reduce((a, b) => a + b, 0) / spans.length;
  const sd = Math.sqrt(spans.reduce((a, g) => a + (g - mean) ** 2, 0) / spans.length);
  return sd / mean;
}

describe("arrivals over 2000 requests at 200 req/s", () => {
  for (const [burstiness, cv] of [
    [1, 1],
    [4, 0.5],
  ] as const) {
    test(`burstiness ${burstiness}: gaps of mean 1/R and CV ${cv}, as scheduled and as the mock received them`, async () => {
      const truth = join(dir, `truth-${burstiness}.jsonl`);
      const details = join(dir, `details-${burstiness}.jsonl`);
      const out = join(dir, `poisson-${burstiness}.jsonl`);
      const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, truthFile: truth }));
      const r = await runCli(
        small(m.url, [
          "--num-prompts",
          "2000",
          "--max-concurrency",
          "64",
          "--request-rate",
          "200",
          "--burstiness",
          String(burstiness),
          "--request-details",
          details,
          "--output-file",
          out,
        ]),
      );
      await m.stop();
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      const line = readSweepLines(out)[0];
      expect(line.request_rate).toBe(200);
      expect(line.burstiness).toBe(burstiness);
      expect(line.completed).toBe(2000);

      // The schedule itself (intended send times): mean gap 5 ms, CV within ~4 standard errors of the target.
      const intended = readJsonl(details).map((d) => d.intended_epoch_ms as number);
      expect(intended).toHaveLength(2000);
      const schedule = gapStats(intended);
      expect(schedule.mean).toBeGreaterThan(4.85);
      expect(schedule.mean).toBeLessThan(5.15);
      expect(Math.abs(schedule.cv - cv)).toBeLessThan(burstiness === 1 ? 0.1 : 0.05);

      // What the server saw: every request, at the rate; the shape survives the client's and the network's jitter.
      const ids = new Set(readJsonl(details).map((d) => d.request_id as string));
      const received = readJsonl(truth)
        .filter((t) => ids.has(t.request_id))
        .map((t) => t.received_ms as number);
      expect(received).toHaveLength(2000);
      const seen = gapStats(received);
      expect(seen.mean).toBeGreaterThan(4.75);
      expect(seen.mean).toBeLessThan(5.25);
      // The shape, read from spans of 10 gaps: a span's CV is 1/sqrt(10 K) (0.32 for Poisson, 0.16 for K = 4), and
      // the send and network jitter (ms on a busy 2-core box) touch only its two ends, where it would blur single
      // 5 ms gaps. Poisson must come out as Poisson; K = 4 closer to its own shape than to Poisson's.
      const spanCv = windowCv(received, 10);
      if (burstiness === 1) expect(Math.abs(spanCv - 1 / Math.sqrt(10))).toBeLessThan(0.08);
      else expect(spanCv).toBeLessThan((1 / Math.sqrt(10) + 1 / Math.sqrt(40)) / 2);
    }, 120_000);
  }
});

describe("a rate sweep", () => {
  test("one line per (pct, rate), in order, with request_rate set; a flush and the same prompts for every line", async () => {
    const m = await mock({ recordInputs: true, pageSize: 16 });
    const out = join(dir, "sweep.jsonl");
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      m.url,
      "--total-tokens",
      "400",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--pcts",
      "0,50",
      "--num-prompts",
      "8",
      "--request-rate",
      "100,inf,50",
      "--output-file",
      out,
    ]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    const lines = readSweepLines(out);
    expect(lines.map((l) => [l.shared_prefix_pct, l.request_rate])).toEqual([
      [0, 100],
      [0, "Infinity"],
      [0, 50],
      [50, 100],
      [50, "Infinity"],
      [50, 50],
    ]);
    for (const l of lines) {
      expect(schemaProblems(l)).toEqual([]);
      expect(l.completed).toBe(8);
      expect(l.flushed).toBe(true);
      expect(l.flush_verified).toBe(true);
      expect(l.cache_check).toBe("ok");
      expect(l.burstiness).toBe(l.request_rate === "Infinity" ? null : 1);
    }
    expect(m.stats().flushes).toBe(6);
    // Per pct, each rate sent the same eight prompts.
    const measured = m
      .stats()
      .received.filter((q) => q.maxNewTokens === 2)
      .map((q) => q.inputIds.join(","));
    expect(measured).toHaveLength(48);
    for (const pct of [0, 1]) {
      const rates = [0, 1, 2].map((k) => measured.slice((pct * 3 + k) * 8, (pct * 3 + k + 1) * 8).sort());
      expect(rates[1]).toEqual(rates[0]);
      expect(rates[2]).toEqual(rates[0]);
    }
    // The console shows the open-loop section for the finite rates only, and `report` rebuilds it from the file.
    expect(r.stdout.split("Latency from Intended Send Time").length - 1).toBe(4);
    const report = await runCli(["report", out]);
    expect(report.stdout.trim()).toBe(r.stdout.trim());
  }, 120_000);
});

describe("latency from the intended send time", () => {
  test("a saturated server behind one client slot: the wait for the slot is in ttft_from_intended, not in the script's TTFT", async () => {
    // The mock runs one request at a time, each ~40 ms; requests are due every 10 ms.
    const m = await mock({ ttftBaseMs: 40, maxRunning: 1 });
    const open = join(dir, "saturated.jsonl");
    const details = join(dir, "saturated-details.jsonl");
    const r = await runCli(
      small(m.url, [
        "--num-prompts",
        "15",
        "--max-concurrency",
        "1",
        "--request-rate",
        "100",
        "--burstiness",
        "inf",
        "--output-file",
        open,
        "--request-details",
        details,
      ]),
    );
    expect(r.code).toBe(0);
    const line = readSweepLines(open)[0];
    // Request k waited about 30k ms for the slot: the last ones over 300 ms, while the server answered each in ~40 ms.
    expect(line.schedule_lag_p90_ms).toBeGreaterThan(250);
    expect(line.ttft_from_intended_p90_ms).toBeGreaterThan(line.p90_ttft_ms + 250);
    expect(line.p90_ttft_ms).toBeLessThan(line.ttft_from_intended_p90_ms / 3);
    expect(line.achieved_request_rate).toBeLessThan(50);
    for (const d of readJsonl(details)) {
      expect(d.start_epoch_ms).toBeGreaterThanOrEqual(d.intended_epoch_ms);
    }
    // Request k was due 10k ms after the first: the schedule kept its times, however late the sends were.
    const intended = readJsonl(details).map((d) => d.intended_epoch_ms as number);
    for (const [k, t] of intended.entries()) expect(t - intended[0]!).toBeCloseTo(10 * k, 2);

    // The same server in a closed loop: the intended time is when the slot freed, so both kinds agree.
    const closed = join(dir, "closed.jsonl");
    expect((await runCli(small(m.url, ["--num-prompts", "15", "--max-concurrency", "1", "--output-file", closed]))).code).toBe(0);
    const c = readSweepLines(closed)[0];
    expect(c.schedule_lag_p90_ms).toBeLessThan(line.schedule_lag_p90_ms / 10);
    expect(c.ttft_from_intended_p90_ms - c.p90_ttft_ms).toBeLessThan(line.schedule_lag_p90_ms / 10);
  }, 120_000);
});

describe("prompts do not depend on the rate", () => {
  test("the ids sent with a Poisson rate equal those sent in the closed loop, and --dump-prompts is unchanged", async () => {
    const sent: string[][] = [];
    const dumps: string[] = [];
    for (const rate of [null, "300"]) {
      const m = await mock({ recordInputs: true });
      const dump = join(dir, `dump-${rate}.jsonl`);
      const rateFlags = rate === null ? [] : ["--request-rate", rate, "--burstiness", "0.5"];
      const r = await runCli([
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        m.url,
        "--total-tokens",
        "3000",
        "--output-len",
        "1",
        "--settle",
        "0",
        "--pcts",
        "0,40,90",
        "--num-prompts",
        "12",
        "--max-concurrency",
        "3",
        "--seed",
        "11",
        "--dump-prompts",
        dump,
        ...rateFlags,
      ]);
      expect(r.code).toBe(0);
      sent.push(
        m
          .stats()
          .received.filter((q) => q.maxNewTokens === 1 && q.inputIds.length === 3000)
          .map((q) => q.inputIds.join(",")),
      );
      dumps.push(readFileSync(dump, "utf8"));
    }
    expect(sent[0]).toHaveLength(36);
    expect([...sent[1]!].sort()).toEqual([...sent[0]!].sort());
    expect(dumps[1]).toBe(dumps[0]!);
    expect(
      dumps[0]!
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).input_ids.join(","))
        .sort(),
    ).toEqual([...sent[0]!].sort());
  }, 120_000);
});

describe("--duration", () => {
  test("requests arrive at the rate until the time is up; the line records how many were sent and completed", async () => {
    const m = await mock();
    const out = join(dir, "duration.jsonl");
    const r = await runCli(small(m.url, ["--request-rate", "100", "--duration", "2", "--output-file", out, "--max-concurrency", "16"]));
    expect(r.code).toBe(0);
    const line = readSweepLines(out)[0];
    expect(line.duration_limit_s).toBe(2);
    // About 200 due within 2 s (Poisson: standard deviation ~14).
    expect(line.sent).toBeGreaterThan(140);
    expect(line.sent).toBeLessThan(260);
    expect(line.num_prompts).toBe(line.sent);
    expect(line.completed).toBe(line.sent);
    expect(r.stdout).toContain(`Sent / completed in 2.0 s:`);
  }, 120_000);
});

describe("memory follows what is in flight, not the number of prompts", () => {
  /** Peak RSS of one run, MiB (rusage). */
  async function peakRssMiB(url: string, numPrompts: number): Promise<number> {
    const proc = Bun.spawn(
      [
        BINARY,
        ...[
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          url,
          "--total-tokens",
          "64000",
          "--output-len",
          "1",
          "--settle",
          "0",
          "--pcts",
          "0",
          "--num-prompts",
          String(numPrompts),
          "--max-concurrency",
          "8",
          "--verify-cache",
          "off",
        ],
      ],
      { stdout: "ignore", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    const stderr = await new Response(proc.stderr).text();
    if ((await proc.exited) !== 0) throw new Error(stderr);
    return proc.resourceUsage()!.maxRSS / 2 ** 20;
  }

  test("ten times the prompts: peak RSS grows by less than the look-ahead allows, far less than holding them would", async () => {
    const m = await mock({ contextLength: 70_000 });
    const few = await peakRssMiB(m.url, 60);
    const many = await peakRssMiB(m.url, 600);
    // Holding 540 more 64k-token prompts (ids and digits, ~9.6 bytes per id) would take ~330 MiB more. Drawing them
    // just in time costs at most the look-ahead (64 MiB of serialized prompts) and garbage not yet collected.
    console.error(`peak RSS: ${few.toFixed(0)} MiB with 60 prompts, ${many.toFixed(0)} MiB with 600`);
    expect(many - few).toBeLessThan(200);
  }, 180_000);
});
