/**
 * A hostile server cannot grow the client's memory without bound (issue 37 item 2): in front of the mock, a server on
 * 127.0.0.1 answers one measured request with an SSE line that never ends, or /server_info with a body of 3 GB
 * streamed for as long as it is read. The compiled binary reads each to its documented limit (MAX_SSE_LINE_BYTES,
 * MAX_CONTROL_BODY_BYTES) and no further: the request fails as `protocol` and is counted, every other request completes;
 * the preflight is one error line. The binary's resident memory, sampled from /proc while it runs, stays far under
 * 400 MB (0.4: 3,003 MB in 3 s for the line, 2.5 GB for the body).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const MIB = 1024 * 1024;
const RSS_LIMIT_BYTES = 400 * 1e6;
const dir = mkdtempSync(join(tmpdir(), "warmbench-hostile-"));

let mock: MockServer;
let hostile: Server<undefined>;
/** What the hostile server does now, and the bytes it handed out of its endless bodies. */
const state = { mode: "line" as "line" | "server_info", measured: 0, servedBytes: 0 };

/** `head`, then 1 MiB pieces for as long as the client reads, up to `totalBytes`. */
function endless(head: string, totalBytes: number): ReadableStream<Uint8Array> {
  const piece = new Uint8Array(MIB).fill(120); // "x": inside a JSON string, no line end
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.servedBytes >= totalBytes) return controller.close();
        const bytes = first ? new TextEncoder().encode(head) : piece;
        first = false;
        state.servedBytes += bytes.length;
        controller.enqueue(bytes);
      },
    },
    { highWaterMark: 0 },
  );
}

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 0, ttftBaseMs: 1, prefillUsPerToken: 0 }));
  hostile = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (state.mode === "server_info" && url.pathname === "/server_info")
        return new Response(endless('{"version":"', 3 * 1024 * MIB), { headers: { "content-type": "application/json" } });
      const body = req.method === "POST" ? await req.text() : undefined;
      if (state.mode === "line" && url.pathname === "/generate" && body !== undefined) {
        const maxNew = (JSON.parse(body) as { sampling_params?: { max_new_tokens?: number } }).sampling_params?.max_new_tokens ?? 0;
        // The second measured request gets the line that never ends (the warm-ups and the others are the mock's).
        if (maxNew > 1 && ++state.measured === 2)
          return new Response(endless('data: {"text":"', 3 * 1024 * MIB), { headers: { "content-type": "text/event-stream" } });
      }
      return fetch(mock.url + url.pathname + url.search, { method: req.method, headers: req.headers, body });
    },
  });
});
afterAll(async () => {
  hostile.stop(true);
  await mock.stop();
});

/** Runs the binary against the hostile server, sampling its resident memory every 20 ms. */
async function runSampled(args: string[]): Promise<{ code: number; stderr: string; peakRssBytes: number }> {
  const proc = Bun.spawn([BINARY, ...args], { stdout: "pipe", stderr: "pipe" });
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1];
      if (kb !== undefined) peak = Math.max(peak, Number(kb) * 1024);
    } catch {
      // Gone: the last sample stands.
    }
  }, 20);
  const [stderr] = await Promise.all([new Response(proc.stderr).text(), new Response(proc.stdout).text()]);
  const code = await proc.exited;
  clearInterval(sampler);
  if (process.env.WARMBENCH_PRINT_RSS === "1") console.error(`peak RSS ${(peak / 1e6).toFixed(0)} MB: ${args.join(" ")}`);
  return { code, stderr, peakRssBytes: peak };
}

const hostileUrl = () => `http://127.0.0.1:${hostile.port}`;

describe("a hostile server", () => {
  test("an SSE line that never ends: that request fails as protocol, the others complete, memory bounded", async () => {
    Object.assign(state, { mode: "line", measured: 0, servedBytes: 0 });
    const out = join(dir, "line.jsonl");
    const r = await runSampled([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      hostileUrl(),
      "--pcts",
      "0",
      "--num-prompts",
      "4",
      "--total-tokens",
      "64",
      "--output-len",
      "2",
      "--max-concurrency",
      "1",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      out,
    ]);
    const [line] = readSweepLines(out);
    expect([line.completed, line.failed, line.errors_by_kind], r.stderr).toEqual([3, 1, { protocol: 1 }]);
    expect(line.errors[0].message).toBe("an SSE line longer than 16 MiB, the most warmbench reads of one line");
    // It read the limit and a little more (what was in flight), never the 3 GB.
    expect(state.servedBytes).toBeGreaterThan(16 * MIB);
    expect(state.servedBytes).toBeLessThan(64 * MIB);
    expect(r.peakRssBytes).toBeGreaterThan(0);
    expect(r.peakRssBytes).toBeLessThan(RSS_LIMIT_BYTES);
  }, 60_000);

  test("a /server_info body of 3 GB: one error line naming the limit, memory bounded", async () => {
    Object.assign(state, { mode: "server_info", measured: 0, servedBytes: 0 });
    const before = mock.stats().generateRequests;
    const r = await runSampled(["--model", LLAMA2_TOKENIZER, "--base-url", hostileUrl(), "--pcts", "0", "--num-prompts", "2", "--settle", "0"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/\/server_info answered more than 64 MiB, the most warmbench reads from a control endpoint/);
    expect(state.servedBytes).toBeLessThan(128 * MIB);
    expect(mock.stats().generateRequests).toBe(before);
    expect(r.peakRssBytes).toBeGreaterThan(0);
    expect(r.peakRssBytes).toBeLessThan(RSS_LIMIT_BYTES);
  }, 60_000);

  test("--sse-line-max-mib and --control-body-max-mib move the limits, as every flag of run, capacity, multiturn, replay and passport", async () => {
    const lineArgs = ["--model", LLAMA2_TOKENIZER, "--base-url", hostileUrl(), "--pcts", "0", "--num-prompts", "4", "--total-tokens", "64"].concat([
      "--output-len",
      "2",
      "--max-concurrency",
      "1",
      "--settle",
      "0",
      "--quiet",
    ]);
    Object.assign(state, { mode: "line", measured: 0, servedBytes: 0 });
    const lowered = join(dir, "line-1mib.jsonl");
    await runSampled([...lineArgs, "--sse-line-max-mib", "1", "--output-file", lowered]);
    const [low] = readSweepLines(lowered);
    expect(low.errors[0].message).toBe("an SSE line longer than 1 MiB, the most warmbench reads of one line");
    expect(state.servedBytes).toBeLessThan(16 * MIB);
    Object.assign(state, { mode: "line", measured: 0, servedBytes: 0 });
    const raised = join(dir, "line-32mib.jsonl");
    await runSampled([...lineArgs, "--sse-line-max-mib", "32", "--output-file", raised]);
    expect(readSweepLines(raised)[0].errors[0].message).toBe("an SSE line longer than 32 MiB, the most warmbench reads of one line");
    expect(state.servedBytes).toBeGreaterThan(32 * MIB);
    Object.assign(state, { mode: "server_info", measured: 0, servedBytes: 0 });
    const r = await runSampled(
      ["--model", LLAMA2_TOKENIZER, "--base-url", hostileUrl(), "--pcts", "0", "--num-prompts", "2", "--settle", "0"].concat(["--control-body-max-mib", "2"]),
    );
    expect(r.stderr).toMatch(/\/server_info answered more than 2 MiB, the most warmbench reads from a control endpoint/);
    expect(state.servedBytes).toBeLessThan(16 * MIB);
  }, 60_000);
});
