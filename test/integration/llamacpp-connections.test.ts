/**
 * No request lost to a stale connection, against the real llama-server (test/engines/llamacpp/build.sh): 60 requests
 * through /v1/completions with `--backend openai` (the generic OpenAI backend, which knows nothing of llama.cpp), one
 * at a time. The loss was never the idle keep-alive close (cpp-httplib's fixed 5 s; llama-server has no flag for it,
 * `--timeout` is its read/write timeout, and an idle gap is not needed to lose a request): llama-server closes the
 * connection after every streamed response although it answered `Keep-Alive: timeout=5, max=100`, and 0.4 reused the
 * pooled connection before it saw the close. That build lost 11 and 4 of 60 here (ECONNRESET at latency 0); with only
 * the retry, 0 and 4 were retried and none lost. Now the `Server: llama.cpp` answer sends every later request on a
 * fresh connection, so none is lost and none even needs the retry (retried_connections 0).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { readSweepLines } from "../helpers/results.ts";
import { runCli } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-conn-"));
let server: LlamaServer | undefined;

if (!skip) {
  beforeAll(async () => {
    server = await startLlamaServer({ ctxTokensPerSlot: 512 });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("60 requests one at a time through /v1/completions: none lost, none retried", async () => {
    const out = join(dir, "out.jsonl");
    const r = await runCli(
      [
        "--model",
        llamaBuild().tokenizer,
        "--base-url",
        server!.url,
        "--backend",
        "openai",
        "--total-tokens",
        "64",
        "--output-len",
        "2",
        "--pcts",
        "0,90",
        "--num-prompts",
        "30",
        "--max-concurrency",
        "1",
        "--flush",
        "none",
        "--verify-cache",
        "off",
        "--output-file",
        out,
      ],
      { timeoutMs: 120_000 },
    );
    if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server!.log().slice(-3000)}`);
    expect(r.code).toBe(0);
    const lines = readSweepLines(out);
    expect(lines.map((l) => [l.completed, l.failed, l.retried_connections, l.errors])).toEqual([
      [30, 0, 0, []],
      [30, 0, 0, []],
    ]);
  }, 150_000);
}
