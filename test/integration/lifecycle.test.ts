/**
 * Process-level behaviour of the compiled binary: a server that is down or not SGLang, and SIGINT mid-pct.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-life-"));
const small = ["--model", LLAMA2_TOKENIZER, "--total-tokens", "200", "--output-len", "4", "--num-prompts", "2", "--settle", "0"];

describe("servers that cannot be benchmarked: one clear line, exit 1, before any pct", () => {
  test("connection refused", async () => {
    const out = join(dir, "refused.jsonl");
    const r = await runCli([...small, "--base-url", "http://127.0.0.1:9", "--output-file", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/warmbench: error: cannot reach the server at http:\/\/127\.0\.0\.1:9: connection refused/);
    expect(r.stdout).toBe("");
  });

  test("a server without /generate (404)", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ detail: "Not Found" }, { status: 404 }) });
    try {
      const r = await runCli([...small, "--base-url", `http://127.0.0.1:${server.port}`]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/\/generate answered 404: this does not look like an SGLang server/);
      expect(r.stdout).toBe("");
    } finally {
      server.stop(true);
    }
  });

  test("an output file in a missing directory fails before any request", async () => {
    const r = await runCli([...small, "--base-url", "http://127.0.0.1:9", "--output-file", "/nonexistent-dir/x.jsonl"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--output-file: directory \/nonexistent-dir does not exist/);
  });
});

describe("SIGINT mid-pct", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer(mockOptions({ port: 0, itlMs: 50, ttftBaseMs: 1, prefillUsPerToken: 0 }));
  });
  afterAll(() => mock.stop());

  test("summarizes the completed requests, writes interrupted: true, exits 130", async () => {
    const out = join(dir, "sigint.jsonl");
    const proc = Bun.spawn(
      [
        BINARY,
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        mock.url,
        "--pcts",
        "0,50",
        "--total-tokens",
        "200",
        "--output-len",
        "20",
        "--num-prompts",
        "40",
        "--max-concurrency",
        "2",
        "--settle",
        "0",
        "--output-file",
        out,
      ],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    // 2 at a time, ~1 s each: after 3.5 s about 6 requests have completed and 2 are in flight.
    await Bun.sleep(3500);
    proc.kill("SIGINT");
    const code = await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    expect(code).toBe(130);
    expect(stderr).toContain("SIGINT");
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!.replace(/Infinity/, "null"));
    expect(line.interrupted).toBe(true);
    expect(line.shared_prefix_pct).toBe(0);
    expect(line.completed).toBeGreaterThanOrEqual(2);
    expect(line.completed).toBeLessThan(40);
    expect(line.failed).toBe(0); // cancelled requests were never measured: neither success nor failure
  });
});

describe("a warm request that fails", () => {
  test("aborts the sweep with the script's message, exit 1, earlier pcts intact", async () => {
    const { startRecordingProxy } = await import("../helpers/recording-proxy.ts");
    const mock = await startMockServer(mockOptions({ port: 0 }));
    // Requests without x-request-id are the flush check's and the warm: pct 0 sends the canary and its probe,
    // pct 50 a probe and then the warm.
    let unnamed = 0;
    const proxy = startRecordingProxy(mock.url, (req) => {
      if (req.method !== "POST" || req.path !== "/generate" || req.headers["x-request-id"]) return null;
      return ++unnamed === 4 ? Response.json({ object: "error", message: "mock: warm refused", code: 503 }, { status: 503 }) : null;
    });
    const out = join(dir, "warm.jsonl");
    try {
      const r = await runCli([...small, "--pcts", "0,50", "--base-url", proxy.url, "--output-file", out, "--request-details", join(dir, "d.jsonl")]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /warmbench: error: Warmup failed - Please make sure benchmark arguments are correctly specified\. Error: http: HTTP 503: .*mock: warm refused/,
      );
      const pcts = readFileSync(out, "utf8").trim().split("\n");
      expect(pcts).toHaveLength(1);
      expect(pcts[0]).toContain('"shared_prefix_pct": 0');
    } finally {
      await proxy.stop();
      await mock.stop();
    }
  });
});

describe("a second signal", () => {
  test("one signal stops a flush that is being retried: exit 130 at once", async () => {
    const mock = await startMockServer(mockOptions({ port: 0, flushFailFirst: 1_000_000 }));
    try {
      const proc = Bun.spawn([BINARY, ...small, "--base-url", mock.url, "--flush-deadline", "600"], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, NO_COLOR: "1" },
      });
      // After the mock turned the 4th flush away the client waits 800 ms (backoff 100, 200, 400, 800 ms): the signal
      // goes 300 ms into that wait, which it must end. A fixed 1.5 s sleep raced a busy box, where the signal could land
      // in a flush POST (another message) or before the first one; landing just after the 4th answer raced the
      // client's reading of it.
      for (let i = 0; i < 1000 && mock.stats().flushRejected < 4; i++) await Bun.sleep(5);
      await Bun.sleep(300);
      expect(mock.stats().flushRejected).toBe(4); // still in that backoff
      const t0 = performance.now();
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(130);
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(await new Response(proc.stderr).text()).toContain("warmbench: error: interrupted while retrying the cache flush");
    } finally {
      await mock.stop();
    }
  });

  test("SIGINT during a /server_info that never answers: exit 130 within a second, nothing written", async () => {
    const seen: string[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      fetch: (req) => {
        seen.push(new URL(req.url).pathname);
        return new Promise<Response>(() => {});
      },
    });
    const out = join(dir, "preflight-int.jsonl");
    try {
      const proc = Bun.spawn([BINARY, ...small, "--base-url", `http://127.0.0.1:${server.port}`, "--output-file", out], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, NO_COLOR: "1" },
      });
      for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(50);
      expect(seen).toEqual(["/server_info"]);
      const t0 = performance.now();
      proc.kill("SIGINT");
      expect(await proc.exited).toBe(130);
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(await new Response(proc.stderr).text()).toContain("warmbench: error: interrupted during GET /server_info");
      expect(await new Response(proc.stdout).text()).toBe("");
      expect(existsSync(out)).toBe(false);
    } finally {
      server.stop(true);
    }
  });
});

describe("concurrency above Bun's 256-per-origin fetch cap", () => {
  test("300 streams really are in flight at once (the binary relaunches itself with the cap raised)", async () => {
    const mock = await startMockServer(mockOptions({ port: 0, itlMs: 25, maxRunning: 1000, prefillUsPerToken: 0 }));
    try {
      const r = await runCli(
        [
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          mock.url,
          "--pcts",
          "0",
          "--total-tokens",
          "50",
          "--output-len",
          "40",
          "--num-prompts",
          "300",
          "--max-concurrency",
          "300",
          "--settle",
          "0",
        ],
        { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "" } },
      );
      expect(r.code).toBe(0);
      expect(mock.stats().maxInFlight).toBe(300);
    } finally {
      await mock.stop();
    }
  });
});
