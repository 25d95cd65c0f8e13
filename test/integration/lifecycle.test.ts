/**
 * Process-level behaviour of the compiled binary: a server that is down or not SGLang, and SIGINT mid-pct.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
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
      [BINARY, "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", "0,50", "--total-tokens", "200",
        "--output-len", "20", "--num-prompts", "40", "--max-concurrency", "2", "--settle", "0", "--output-file", out],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    // 2 at a time, ~1 s each: after 3.5 s about 6 requests have completed and 2 are in flight.
    await Bun.sleep(3500);
    proc.kill("SIGINT");
    const code = await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    expect(code).toBe(130);
    expect(stderr).toContain("SIGINT");
    const lines = readFileSync(out, "utf8").trim().split("\n").filter((l) => l.includes('"type": "pct"'));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!.replace(/Infinity/, "null"));
    expect(line.interrupted).toBe(true);
    expect(line.shared_prefix_pct).toBe(0);
    expect(line.completed).toBeGreaterThanOrEqual(2);
    expect(line.completed).toBeLessThan(40);
    expect(line.failed).toBe(0); // cancelled requests were never measured: neither success nor failure
  });
});
