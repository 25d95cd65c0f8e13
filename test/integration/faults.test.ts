/**
 * Every fault the mock can inject, met by the compiled binary: the exit code, the message on stderr, the
 * "Failures" section on stdout, and the JSONL's failed / errors / errors_by_kind for every pct that completed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readJsonl, readSweepLines } from "../helpers/results.ts";
import { startMockProcess } from "../helpers/mock-process.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-faults-"));
const N = 8;
const OUT_LEN = 6;
const PCTS = [0, 50];
// Faults hit measured requests 1..16 in order: with every 3rd, requests 3, 6 (pct 0) and 9, 12, 15 (pct 50).
const EVERY = 3;
const FAILED_PER_PCT = [2, 3];

let outputs = 0;
const nextOutput = () => join(dir, `run-${++outputs}.jsonl`);
const started: MockServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((m) => m.stop()));
});

async function fastMock(overrides: Partial<MockOptions>): Promise<MockServer> {
  const mock = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 1, prefillUsPerToken: 0, ...overrides }));
  started.push(mock);
  return mock;
}

/** A small sweep of the binary against `url`; returns the process result and the JSONL path. */
async function sweep(url: string, extra: string[] = [], env?: Record<string, string>): Promise<CliResult & { out: string }> {
  const out = nextOutput();
  const r = await runCli(
    [
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      url,
      "--pcts",
      PCTS.join(","),
      "--num-prompts",
      String(N),
      "--total-tokens",
      "200",
      "--output-len",
      String(OUT_LEN),
      "--max-concurrency",
      "4",
      "--settle",
      "0",
      "--output-file",
      out,
      ...extra,
    ],
    { env },
  );
  return { ...r, out };
}

const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warmbench: "));

describe("per-request faults: the request fails with its kind, the sweep completes, exit 3", () => {
  const cases: Array<{ name: string; flag: keyof MockOptions; injected: string; kind: string; message: RegExp; mock?: Partial<MockOptions>; args?: string[] }> =
    [
      { name: "5xx before streaming", flag: "failEvery", injected: "fail", kind: "http", message: /^HTTP 503: .*mock: injected failure/ },
      { name: "an error event in the stream", flag: "errorEventEvery", injected: "error-event", kind: "server_error", message: /^mock: injected error$/ },
      { name: "an abort finish_reason", flag: "abortEvery", injected: "abort", kind: "abort", message: /Request running timeout reached/ },
      { name: "a TCP reset mid-stream", flag: "resetEvery", injected: "reset", kind: "network", message: /ECONNRESET|reset|closed/i },
      { name: "a malformed JSON event", flag: "malformedEvery", injected: "malformed", kind: "parse", message: /^invalid JSON event: / },
      {
        name: "a stall longer than --stall-timeout",
        flag: "stallEvery",
        injected: "stall",
        kind: "stall",
        message: /^no bytes for 500 ms$/,
        mock: { stallS: 3 },
        args: ["--stall-timeout", "0.5"],
      },
    ];

  for (const c of cases) {
    test(c.name, async () => {
      const mock = await fastMock({ [c.flag]: EVERY, ...c.mock });
      const r = await sweep(mock.url, c.args);
      if (r.code !== 3) console.error(r.stderr);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("5 measured request(s) failed: exit code 3");
      expect(errorLines(r.stderr)).toEqual([]);

      const lines = readSweepLines(r.out);
      expect(lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
      lines.forEach((l, k) => {
        expect(l.failed).toBe(FAILED_PER_PCT[k]);
        expect(l.completed).toBe(N - FAILED_PER_PCT[k]!);
        expect(l.errors_by_kind).toEqual({ [c.kind]: FAILED_PER_PCT[k] });
        expect(l.errors).toHaveLength(1);
        expect(l.errors[0].kind).toBe(c.kind);
        expect(l.errors[0].count).toBe(FAILED_PER_PCT[k]);
        expect(l.errors[0].message).toMatch(c.message);
        // Failed requests are not measured: the output tokens are those of the successful ones only.
        expect(l.total_output).toBe(l.completed * OUT_LEN);
      });
      expect(mock.stats().faultsInjected[c.injected]).toBe(5);

      const sections = r.stdout.split("---Failures---");
      expect(sections).toHaveLength(PCTS.length + 1);
      FAILED_PER_PCT.forEach((failed, k) => {
        expect(sections[k + 1]).toMatch(new RegExp(`^-*\\nFailed requests:\\s+${failed}\\s*\\n  ${c.kind}: .* x${failed}\\n`));
      });
      const all = readSweepLines(r.out);
      expect(all.reduce((sum, l) => sum + l.failed, 0)).toBe(5);
    });
  }
});

describe("invalid UTF-8 inside a token event", () => {
  // Decision: the byte is decoded as U+FFFD (TextDecoder, not fatal) and the request succeeds, because
  // timing and token counts come from meta_info, which the bad byte does not touch; only the text is affected.
  async function clean(incremental: boolean) {
    return readSweepLines((await sweep((await fastMock({ incremental })).url)).out);
  }

  test("cumulative text: every request succeeds; the last (clean) event gives the same retokenized output", async () => {
    const mock = await fastMock({ invalidUtf8Every: EVERY });
    const r = await sweep(mock.url);
    expect(r.code).toBe(0);
    expect(mock.stats().faultsInjected["invalid-utf8"]).toBe(5);
    const lines = readSweepLines(r.out);
    const reference = await clean(false);
    lines.forEach((l, k) => {
      expect(l.completed).toBe(N);
      expect(l.failed).toBe(0);
      expect(l.total_output).toBe(N * OUT_LEN);
      expect(l.total_output_retokenized).toBe(reference[k].total_output_retokenized);
    });
    expect(r.stdout).not.toContain("Failures");
  });

  test("incremental text: every request succeeds; the bad byte becomes U+FFFD in the text", async () => {
    const mock = await fastMock({ invalidUtf8Every: EVERY, incremental: true });
    const r = await sweep(mock.url);
    expect(r.code).toBe(0);
    expect(mock.stats().faultsInjected["invalid-utf8"]).toBe(5);
    const lines = readSweepLines(r.out);
    const reference = await clean(true);
    lines.forEach((l, k) => {
      expect(l.completed).toBe(N);
      expect(l.failed).toBe(0);
      expect(l.total_output).toBe(N * OUT_LEN);
      // The replacement character is kept and retokenizes to extra tokens.
      expect(l.total_output_retokenized).toBeGreaterThan(reference[k].total_output_retokenized);
    });
  });
});

describe("slow response headers", () => {
  test("requests succeed and TTFT includes the delay before the headers", async () => {
    // Every /generate waits (canaries and the warm too): one pct, all requests in one wave, keeps it short.
    const mock = await fastMock({ slowHeadersMs: 400 });
    const r = await sweep(mock.url, ["--pcts", "50", "--max-concurrency", String(N)]);
    expect(r.code).toBe(0);
    const lines = readSweepLines(r.out);
    expect(lines).toHaveLength(1);
    expect(lines[0].completed).toBe(N);
    expect(lines[0].mean_ttft_ms).toBeGreaterThanOrEqual(400);
    expect(lines[0].median_ttft_ms).toBeGreaterThanOrEqual(400);
    // TPOT is measured after the first token, so the header delay does not leak into it.
    expect(lines[0].mean_tpot_ms).toBeLessThan(400);
  });

  test("with --request-timeout shorter than the delay every request times out: exit 1 after the pct is written", async () => {
    const mock = await fastMock({ slowHeadersMs: 1500 });
    const r = await sweep(mock.url, ["--request-timeout", "0.4"]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual(["warmbench: error: All requests failed for shared_prefix=0%."]);
    const lines = readSweepLines(r.out);
    expect(lines).toHaveLength(1);
    expect(lines[0].completed).toBe(0);
    expect(lines[0].failed).toBe(N);
    expect(lines[0].errors_by_kind).toEqual({ timeout: N });
    expect(lines[0].errors[0].message).toBe("request timeout after 400 ms");
    expect(r.stdout).toMatch(/Failed requests:\s+8\s*\n  timeout: request timeout after 400 ms x8/);
  });
});

describe("/flush_cache answering 400 (busy)", () => {
  test("a few 400s are retried: the sweep succeeds and records the attempts", async () => {
    const mock = await fastMock({ flushFailFirst: 3 });
    const r = await sweep(mock.url);
    expect(r.code).toBe(0);
    const lines = readSweepLines(r.out);
    expect(mock.stats().faultsInjected["flush-fail"]).toBe(3);
    // The first pct's flushes absorbed the 3 failures; the second pct's went through at once.
    expect(lines[0].flush_attempts - lines[1].flush_attempts).toBe(3);
    expect(lines.every((l) => l.completed === N)).toBe(true);
  });

  test("400 until a tiny --flush-deadline: exit 1, one clear line, no pct written", async () => {
    const mock = await fastMock({ flushFailFirst: 1000 });
    const r = await sweep(mock.url, ["--flush-deadline", "0.3"]);
    expect(r.code).toBe(1);
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^warmbench: error: POST \/flush_cache kept answering 400 for 0\.3s \(\d+ attempts; last: ".*"\): .*--flush-deadline/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(readJsonl(r.out)).toEqual([]);
  });

  test("a flush that turns busy after the first pct: exit 1, the first pct's line intact", async () => {
    const mock = await fastMock({});
    // Busy from the moment the first pct's measured requests went through (the canary and warm requests
    // before them are fewer than N); the first pct's own flushes were answered by the mock.
    let generates = 0;
    const proxy = startRecordingProxy(mock.url, (req) => {
      if (req.path === "/generate") generates++;
      return req.path.startsWith("/flush_cache") && generates >= N ? new Response("Flush cache failed.", { status: 400 }) : null;
    });
    try {
      const r = await sweep(proxy.url, ["--flush-deadline", "0.3"]);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain("POST /flush_cache kept answering 400");
      const all = readSweepLines(r.out);
      expect(all.map((l) => l.shared_prefix_pct)).toEqual([0]);
      expect(all[0].completed).toBe(N);
    } finally {
      await proxy.stop();
    }
  });
});

describe("the server goes away", () => {
  test("/generate missing (404): exit 1, one line, before any pct", async () => {
    const mock = await startMockProcess(["--no-generate"]);
    try {
      const r = await sweep(mock.url);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toEqual([
        `warmbench: error: ${mock.url}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`,
      ]);
      expect(r.stdout).toBe("");
      expect(readSweepLines(r.out)).toEqual([]);
    } finally {
      await mock.stop();
    }
  });

  test("the server dies mid-pct (--exit-after): the pct's requests fail as network/connect, exit 1, earlier pcts intact", async () => {
    // One request at a time: requests 9..11 of pct 50 complete, the 12th is cut when the server dies, 13..16 find
    // nobody listening. The pct is written (it has successes); the next pct's flush cannot reach the server.
    const mock = await startMockProcess(["--exit-after", "12", "--ttft-base-ms", "1", "--itl-ms", "1"]);
    try {
      const r = await sweep(mock.url, ["--pcts", "0,50,90", "--max-concurrency", "1"]);
      expect(await mock.proc.exited).toBe(0);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toEqual([`warmbench: error: cannot reach the server at ${mock.url}: connection refused (ECONNREFUSED)`]);
      const lines = readSweepLines(r.out);
      expect(lines.map((l) => l.shared_prefix_pct)).toEqual([0, 50]);
      expect(lines[0].completed).toBe(N);
      expect(lines[0].failed).toBe(0);
      expect(lines[1].completed).toBe(3);
      expect(lines[1].failed).toBe(5);
      const byKind = lines[1].errors_by_kind;
      expect(Object.keys(byKind).sort()).toEqual(["connect", "network"]);
      expect(byKind.network).toBe(1);
      expect(byKind.connect).toBe(4);
      expect(r.stdout).toMatch(/Failed requests:\s+5\s*\n/);
    } finally {
      await mock.stop();
    }
  });

  test("the server dies with every request of a pct in flight: exit 1 'All requests failed', the pct is written", async () => {
    const mock = await startMockProcess(["--exit-after", "4", "--ttft-base-ms", "1", "--itl-ms", "20"]);
    try {
      const r = await sweep(mock.url, ["--pcts", "0,50"]);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toEqual(["warmbench: error: All requests failed for shared_prefix=0%."]);
      const lines = readSweepLines(r.out);
      expect(lines).toHaveLength(1);
      expect(lines[0].completed).toBe(0);
      expect(lines[0].failed).toBe(N);
      const byKind = lines[0].errors_by_kind;
      expect((byKind.network ?? 0) + (byKind.connect ?? 0)).toBe(N);
      expect(byKind.network).toBeGreaterThanOrEqual(1);
    } finally {
      await mock.stop();
    }
  });
});

describe("issue 37: a schedule past setTimeout's range", () => {
  test("--request-rate 1e-9 waits for its next arrival without TimeoutOverflowWarning, and SIGINT ends it (exit 130) with the line", async () => {
    const mock = await fastMock({});
    const out = nextOutput();
    const args = ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", "0", "--num-prompts", "3", "--total-tokens", "64", "--output-len", "2"];
    const proc = Bun.spawn([BINARY, ...args, "--request-rate", "1e-9", "--settle", "0", "--quiet", "--output-file", out], { stdout: "pipe", stderr: "pipe" });
    const stderr = new Response(proc.stderr).text();
    void new Response(proc.stdout).text();
    // Arrivals ~3e10 years apart (the first one too): a second later the line is only waiting.
    await Bun.sleep(1500);
    proc.kill("SIGINT");
    const code = await proc.exited;
    const text = await stderr;
    expect(code, text).toBe(130);
    expect(text).not.toContain("TimeoutOverflowWarning");
    const [line] = readSweepLines(out);
    expect([line.completed, line.failed, line.interrupted]).toEqual([0, 0, true]);
  }, 30_000);
});
