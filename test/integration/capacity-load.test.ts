/**
 * Capacity only counts loads the server carried. A 3-slot server behind a client capped at 3 in flight never queues
 * a request, so TTFT from the send stays low at any offered rate: 0.3 reported "90% >= 100, every gate holds at the
 * highest load" while its own probes said the client had sent 24.8 req/s. Now a probe whose offered rate was not sent
 * on schedule fails as "load not sustained", and the capacity found is what the server carried.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-capacity-load-"));
let mock: MockServer;

beforeAll(async () => {
  // 3 slots, each request ~100 ms (20 ms to the first token, 8 tokens 10 ms apart): the server carries ~30 req/s.
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, maxRunning: 3, ttftBaseMs: 20, itlMs: 10, prefillUsPerToken: 0 }));
});
afterAll(() => mock.stop());

describe("capacity never reports a load the server did not carry", () => {
  test("a 3-slot server behind --max-concurrency 3: the search lands near what it carried, not at the bracket's top", async () => {
    const out = join(dir, "capacity.jsonl");
    const r = await runCli(
      [
        "capacity",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        mock.url,
        "--pcts",
        "90",
        "--total-tokens",
        "200",
        "--output-len",
        "8",
        "--max-concurrency",
        "3",
        "--bracket",
        "5:100",
        "--burstiness",
        "inf",
        "--num-prompts",
        "24",
        "--precision",
        "20%",
        "--gate",
        "p99_ttft_ms<=80",
        "--require",
        "60@pct>=90",
        "--settle",
        "0",
        "--quiet",
        "--output-file",
        out,
      ],
      { timeoutMs: 180_000 },
    );
    const lines = readJsonl(out);
    const capacity = lines.find((l) => l.type === "capacity")!;
    const probes = lines.filter((l) => l.type === undefined && typeof l.probe === "number");
    // The warning that the gates read latency from the send while the client's cap queues requests.
    expect(r.stderr).toContain("read(s) latency from the send, while --max-concurrency 3 queues requests");
    // Every probe whose load was not sustained failed, whatever its TTFT gate said.
    const unsustained = probes.filter((p) => p.evidence.load.sustained === false);
    expect(unsustained.length).toBeGreaterThan(0);
    for (const p of unsustained) expect(p.gates[0].evidence?.[0]).toStartWith("load_not_sustained");
    expect(capacity.capacity_status).toBe("found");
    expect(capacity.capacity_request_rate).toBeGreaterThan(10);
    expect(capacity.capacity_request_rate).toBeLessThan(45);
    // The requirement above what the server carries is not met.
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("--require 60@pct>=90: the capacity at 90% is");
  }, 200_000);
});
