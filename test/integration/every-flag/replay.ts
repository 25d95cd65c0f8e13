/**
 * The every-flag table of `warmbench replay TRACE`: each line replays a small generated Mooncake trace (16-token
 * blocks, a shared system prompt, two-turn chains, two conversations at one timestamp) against a mock process.
 */
import { expect } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { observe, sentSignature, type Observation } from "../../helpers/flag-proof.ts";
import { generateTrace, traceText } from "../../helpers/mooncake-trace.ts";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER } from "../../helpers/run-cli.ts";
import {
  detailsDiffer,
  exits,
  fails,
  proofBodies,
  sends,
  verboseEntry,
  writes,
  type Entry,
  type ProofBodies,
  FLUSH_DEADLINE,
  SERVER_FLAGS,
  PASSPORT_ENTRY,
  ROUTER_ENTRIES,
} from "./entries.ts";
import { revisionEntry, SERVER_CACHE } from "./measuring.ts";

const traceDir = mkdtempSync(join(tmpdir(), "warmbench-flag-trace-"));
const LINES = generateTrace({
  blockSize: 16,
  systems: 1,
  systemBlocks: 2,
  conversations: 3,
  turns: 2,
  maxTurnTokens: 20,
  turnGapMs: 500,
  startGapMs: 200,
  outputLength: 2,
  seed: 3,
});
const TRACE = join(traceDir, "trace.jsonl");
writeFileSync(TRACE, traceText(LINES));
const OTHER = join(traceDir, "other.jsonl");
writeFileSync(
  OTHER,
  traceText(
    generateTrace({
      blockSize: 16,
      systems: 1,
      systemBlocks: 1,
      conversations: 2,
      turns: 1,
      maxTurnTokens: 20,
      turnGapMs: 500,
      startGapMs: 200,
      outputLength: 2,
      seed: 4,
    }),
  ),
);
/** A context that the shortest requests fit and the longest do not. */
const TOTALS = LINES.map((l) => l.input_length + l.output_length).sort((a, b) => a - b);
const CONTEXT = String(TOTALS[0]!);

const BASE = [
  "replay",
  TRACE,
  "--block-size",
  "16",
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  "{url}",
  "--settle",
  "0",
  "--window",
  "1",
  "--output-file",
  "{dir}/o.jsonl",
  "--request-details",
  "{dir}/d.jsonl",
];

const intendedSpreadMs = (x: Observation): number => {
  const t = x.lines("d.jsonl").map((l) => l.intended_epoch_ms);
  return Math.max(...t) - Math.min(...t);
};
const whole = (x: Observation) => x.lines("o.jsonl").at(-1)!;
const PROGRESS_LINE = /\d+\/\d+ requests, /;

const GATE = "ttft_from_intended_p99_ms<=0.001";

const REPLAY: Record<string, Entry> = {
  // Judged on the whole replay's line: an unmeetable one fails the run (0.4 took no --gate: 4 of 4 diverged exited 0).
  gate: { args: ["--gate", GATE], proof: exits(6) },
  "gates-file": {
    args: ["--gates-file", "{dir}/gates.txt"],
    setup: (dir) => writeFileSync(join(dir, "gates.txt"), `# unmeetable\n${GATE}\n`),
    proof: exits(6),
  },
  passport: PASSPORT_ENTRY(whole),
  ...ROUTER_ENTRIES(whole),
  // Two replicas (one mock behind two addresses): the whole replay's line says how its requests were routed.
  route: {
    args: ["--base-url", "{url},{url2}", "--route", "session"],
    vs: ["--base-url", "{url},{url2}"],
    proof: (o, b) => {
      expect([whole(o).route, whole(b).route]).toEqual(["session", "round-robin"]);
      expect(whole(o).ledger_requests).toBeGreaterThan(0);
    },
  },
  // After the replay: the whole replay's line carries the check (the trace's requests that shared a prefix).
  "check-fidelity": {
    args: ["--check-fidelity"],
    proof: (o, b) => {
      expect(whole(o).fidelity_checked).toBeGreaterThan(0);
      expect(whole(o).fidelity_identical).toBe(whole(o).fidelity_checked);
      expect(whole(b).fidelity_checked).toBeUndefined();
    },
  },
  "fidelity-sample": {
    args: ["--check-fidelity", "--fidelity-sample", "1"],
    vs: ["--check-fidelity"],
    proof: (o, b) => {
      expect(whole(o).fidelity_checked + whole(o).fidelity_unproven).toBe(1);
      expect(whole(b).fidelity_checked + whole(b).fidelity_unproven).toBeGreaterThan(1);
    },
  },
  "fidelity-tie-nats": {
    args: ["--check-fidelity", "--fidelity-tie-nats", "0.001"],
    vs: ["--check-fidelity"],
    server: ["--fault-tie-flip"],
    proof: (o, b) => {
      expect(whole(o).fidelity_diverged).toBeGreaterThan(0);
      expect(whole(b)).toMatchObject({ fidelity_diverged: 0 });
      expect(whole(b).fidelity_near_tie).toBe(whole(o).fidelity_diverged);
    },
  },
  analyze: {
    args: ["--analyze"],
    proof: (o, b) => {
      expect(o.code).toBe(0);
      expect(o.requests).toHaveLength(0);
      expect(b.requests.length).toBeGreaterThan(0);
      expect(o.stdout).toContain("Hit ratio of an infinite cache");
    },
  },
  // The trace's hash ids do not fit 32-token blocks.
  "block-size": { args: ["--block-size", "32"], proof: exits(2) },
  "skip-invalid": {
    args: ["--skip-invalid"],
    server: ["--context-length", CONTEXT],
    vs: [],
    proof: (o, b) => {
      expect(b.code).toBe(2);
      expect(o.code).toBe(0);
      expect(o.stderr).toMatch(/--skip-invalid: \d+ request\(s\) of .* longer than the model's context of \d+ tokens dropped/);
    },
  },
  start: { args: ["--start", "0.4"], proof: detailsDiffer },
  "num-prompts": { args: ["--num-prompts", "2"], proof: (o) => expect(o.lines("d.jsonl")).toHaveLength(2) },
  duration: { args: ["--duration", "0.3"], proof: (o, b) => expect(o.lines("d.jsonl").length).toBeLessThan(b.lines("d.jsonl").length) },
  "time-scale": {
    args: ["--time-scale", "0.1"],
    proof: (o, b) => {
      expect(intendedSpreadMs(b)).toBeGreaterThan(600);
      expect(intendedSpreadMs(o)).toBeLessThan(150);
    },
  },
  "ignore-timestamps": {
    args: ["--ignore-timestamps", "--max-concurrency", "6"],
    proof: (o, b) => {
      expect(intendedSpreadMs(b)).toBeGreaterThan(600);
      expect(intendedSpreadMs(o)).toBeLessThan(100);
    },
  },
  window: { args: ["--window", "0.25"], proof: (o, b) => expect(o.lines("o.jsonl").length).toBeGreaterThan(b.lines("o.jsonl").length) },
  "cache-tokens": {
    args: ["--cache-tokens", "16"],
    proof: (o, b) => {
      expect(whole(b).predicted_eviction_tokens).toBe(0);
      expect(whole(o).predicted_eviction_tokens).toBeGreaterThan(0);
    },
  },
  model: { args: ["--model", QWEN3_TOKENIZER], proof: sends },
  tokenizer: { args: ["--tokenizer", QWEN3_TOKENIZER], proof: sends },
  backend: { args: ["--backend", "openai"], proof: sends },
  ...SERVER_FLAGS,
  "api-key": {
    args: ["--api-key", "sekrit-key"],
    proof: (o, b) => {
      expect(o.requests.every((r) => r.headers.authorization === "Bearer sekrit-key")).toBe(true);
      expect(b.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
    },
  },
  "served-model-name": {
    args: ["--backend", "openai", "--served-model-name", "other-model"],
    vs: ["--backend", "openai"],
    proof: (o) => {
      expect(o.requests.filter((r) => r.path === "/v1/completions").every((r) => JSON.parse(r.body).model === "other-model")).toBe(true);
    },
  },
  // The server counts in pages of 16; told 1, the client expects the partial blocks the chains share.
  "page-size": {
    args: ["--verify-cache", "strict", "--page-size", "1"],
    vs: ["--verify-cache", "strict"],
    server: ["--page-size", "16"],
    proof: (o, b) => {
      expect(b.code).toBe(0);
      expect(o.code).toBe(4);
    },
  },
  "server-cache": SERVER_CACHE,
  "cache-tolerance": {
    args: ["--page-size", "1", "--verify-cache", "strict", "--cache-tolerance", "100%"],
    vs: ["--page-size", "1", "--verify-cache", "strict"],
    server: ["--page-size", "16"],
    proof: (o, b) => {
      expect(b.code).toBe(4);
      expect(o.code).toBe(0);
    },
  },
  "max-concurrency": {
    args: ["--ignore-timestamps", "--max-concurrency", "1"],
    vs: ["--ignore-timestamps", "--max-concurrency", "2"],
    server: ["--itl-ms", "30"],
    proof: (o, b) => {
      const gap = (x: Observation) => {
        const s = x
          .lines("d.jsonl")
          .map((l) => l.start_epoch_ms)
          .sort((p, q) => p - q);
        return s[1]! - s[0]!;
      };
      expect(gap(o)).toBeGreaterThan(25);
      expect(gap(b)).toBeLessThan(25);
    },
  },
  seed: { args: ["--seed", "7"], proof: sends },
  "disable-ignore-eos": { args: ["--disable-ignore-eos"], proof: sends },
  "output-file": { args: ["--output-file", "{dir}/other.jsonl"], proof: writes("other.jsonl") },
  "extra-request-body": { args: ["--extra-request-body", '{"max_new_tokens_hint":1}'], proof: sends },
  "dump-prompts": { args: ["--dump-prompts", "{dir}/p.jsonl"], proof: (o) => expect(o.lines("p.jsonl")).toHaveLength(LINES.length) },
  "request-details": { args: ["--request-details", "{dir}/d2.jsonl"], proof: writes("d2.jsonl") },
  settle: { args: ["--settle", "1.5"], proof: (o, b) => expect(o.wallMs).toBeGreaterThan(b.wallMs + 1000) },
  "flush-deadline": FLUSH_DEADLINE,
  "request-timeout": { args: ["--request-timeout", "0.001"], proof: fails },
  "stall-timeout": { args: ["--stall-timeout", "0.3"], server: ["--stall-every", "2", "--stall-s", "3"], vs: [], proof: fails },
  flush: { args: ["--flush", "none"], proof: sends },
  "verify-cache": { args: ["--verify-cache", "off"], proof: sends },
  quiet: {
    args: ["--quiet"],
    tty: true,
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(b.stdout).toMatch(PROGRESS_LINE);
      expect(o.stdout).not.toMatch(PROGRESS_LINE);
    },
  },
  verbose: verboseEntry(["--base-url", "http://127.0.0.1:9"]),
};

/** The positional: another trace sends other prompts. */
async function traceProof(): Promise<void> {
  const b = await observe({ args: BASE });
  const o = await observe({ args: BASE.map((a) => (a === TRACE ? OTHER : a)) });
  expect([b.code, o.code]).toEqual([0, 0]);
  expect(sentSignature(o)).not.toEqual(sentSignature(b));
}

export const REPLAY_PROOFS: ProofBodies = { ...proofBodies(BASE, { ...REPLAY, revision: revisionEntry() }), trace: traceProof };
