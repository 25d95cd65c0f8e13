/**
 * --check-fidelity against the real llama.cpp server (the cached CPU build; skipped outside CI when missing, a failure
 * under CI=true): greedy answers after a prefix hit against answers after an erased slot. It must never report a
 * divergence; what it does report (identical, or near ties: the tiny random-weight model's logits are nearly flat, so
 * a change in the cached path's numerics can flip a token) is printed for the note.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaBuild, skipWithoutLlamaBuild, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { readJsonl } from "../helpers/results.ts";
import { runCli } from "../helpers/run-cli.ts";

const skip = skipWithoutLlamaBuild();
const dir = mkdtempSync(join(tmpdir(), "warmbench-llama-fidelity-"));
let server: LlamaServer | undefined;

beforeAll(async () => {
  if (!skip) server = await startLlamaServer({ slots: 1, ctxTokensPerSlot: 2048 });
});
afterAll(async () => {
  await server?.stop();
});

describe.skipIf(skip)("--check-fidelity against a real llama-server", () => {
  test("every sample is compared with proven cache states, and none diverged", async () => {
    const out = join(dir, "f.jsonl");
    const r = await runCli(
      [
        "run",
        "--model",
        llamaBuild().tokenizer,
        "--base-url",
        server!.url,
        "--num-prompts",
        "2",
        "--total-tokens",
        "512",
        "--output-len",
        "8",
        "--pcts",
        "50,90",
        "--settle",
        "0",
        "--quiet",
        "--check-fidelity",
        "--fidelity-sample",
        "3",
        "--gate",
        "fidelity_diverged==0",
        "--output-file",
        out,
      ],
      { timeoutMs: 300_000 },
    );
    const lines = readJsonl(out, { validate: true });
    const seen = lines.map(
      (l) =>
        `${l.shared_prefix_pct}%: ${l.fidelity_checked} compared, ${l.fidelity_identical} identical, ${l.fidelity_near_tie} near ties (largest gap ${l.fidelity_max_gap_nats ?? "-"} nats, first at ${l.fidelity_first_divergence.join(" ") || "-"}), ${l.fidelity_diverged} diverged, ${l.fidelity_unproven} unproven${l.fidelity_note ? ` (${l.fidelity_note})` : ""}`,
    );
    console.log(`llama.cpp fidelity: ${seen.join("; ")}`);
    if (r.code !== 0) console.error(`${r.stderr}\n--- server log tail ---\n${server!.log().slice(-2000)}`);
    expect(r.code).toBe(0);
    for (const l of lines) {
      expect(l.fidelity_checked).toBe(3);
      expect(l.fidelity_unproven).toBe(0);
      expect(l.fidelity_diverged).toBe(0);
      expect(l.fidelity_unclassified).toBe(0);
      expect(l.fidelity_identical + l.fidelity_near_tie).toBe(3);
    }
  }, 300_000);
});
