/**
 * The every-flag table of `warmbench capacity`: a short search against a mock process behind the recording proxy.
 * The base line's gate always holds, so the search climbs from --start 50 to the bracket's top (100) in two probes;
 * a flag shows itself in what was sent, in the probe and capacity lines, or in the exit code.
 */
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Observation } from "../../helpers/flag-proof.ts";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER } from "../../helpers/run-cli.ts";
import { exits, fails, proofBodies, sends, verboseEntry, writes, type Entry, type Proof, type ProofBodies, FLUSH_DEADLINE, SERVER_FLAGS } from "./entries.ts";
import { revisionEntry } from "./measuring.ts";

const BASE = [
  "capacity",
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  "{url}",
  "--total-tokens",
  "64",
  "--output-len",
  "2",
  "--pcts",
  "0",
  "--settle",
  "0",
  "--num-prompts",
  "4",
  "--start",
  "50",
  "--bracket",
  "1:100",
  "--precision",
  "40%",
  "--confirm",
  "1",
  "--gate",
  "failed==0",
  "--output-file",
  "{dir}/o.jsonl",
];
/** Holds at no load: the search fails at --start and at the bracket's bottom (40 with BOTTOM). */
const UNMEETABLE = "p99_ttft_ms<=0.001";
const BOTTOM = ["--bracket", "40:100"];
/** One slot of 60 ms: the capacity at a 150 ms TTFT lies well inside the bracket (8 requests a probe, from 5 to 100). */
const SLOW = ["--max-running", "1", "--ttft-base-ms", "60"];
const SLO = ["--gate", "ttft_from_intended_p99_ms<=150", "--num-prompts", "8", "--bracket", "5:100"];

const probes = (o: Observation) => o.lines("o.jsonl").filter((l) => l.type === undefined);
const result = (o: Observation) => o.lines("o.jsonl").find((l) => l.type === "capacity")!;
const differs =
  (read: (o: Observation) => unknown): Proof =>
  (o, b) => {
    expect(o.code).toBe(b.code);
    expect(JSON.stringify(read(o))).not.toBe(JSON.stringify(read(b)));
  };
/**
 * Every probe's load was carried. A loaded box that sends one request 10 ms late fails that probe as "load not
 * sustained" and sends the search down; such a run says nothing of the flag, so the flagged line is run again.
 */
const carried = (o: Observation) => probes(o).every((l) => l.evidence?.load?.sustained !== false);
const moreProbes: Proof = (o, b) => expect(result(o).probes_sent).toBeGreaterThan(result(b).probes_sent);

const CAPACITY: Record<string, Entry> = {
  seed: { args: ["--seed", "7"], proof: sends },
  "disable-ignore-eos": { args: ["--disable-ignore-eos"], proof: sends },
  "output-file": { args: ["--output-file", "{dir}/other.jsonl"], proof: writes("other.jsonl") },
  "extra-request-body": { args: ["--extra-request-body", '{"max_new_tokens_hint":1}'], proof: sends },
  settle: { args: ["--settle", "1.5"], proof: (o, b) => expect(o.wallMs).toBeGreaterThan(b.wallMs + 2000) },
  "request-timeout": { args: ["--request-timeout", "0.001"], proof: fails },
  gate: {
    args: ["--gate", UNMEETABLE, ...BOTTOM],
    vs: BOTTOM,
    proof: (o, b) => {
      expect([result(o).capacity_status, result(o).capacity_request_rate]).toEqual(["below_min", 0]);
      expect(result(b).capacity_status).toBe("at_max");
    },
  },
  "gates-file": {
    args: ["--gates-file", "{dir}/gates.txt", ...BOTTOM],
    vs: BOTTOM,
    setup: (dir) => writeFileSync(join(dir, "gates.txt"), `# unmeetable\n${UNMEETABLE}\n`),
    proof: (o, b) => expect([result(o).capacity_status, result(b).capacity_status]).toEqual(["below_min", "at_max"]),
  },
  verbose: verboseEntry(["--base-url", "http://127.0.0.1:9"]),
  quiet: {
    args: ["--quiet"],
    tty: true,
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(b.stdout).toMatch(/\d+\/\d+ requests, /);
      expect(o.stdout).not.toMatch(/\d+\/\d+ requests, /);
    },
  },
  backend: { args: ["--backend", "openai"], proof: sends },
  endpoint: { args: ["--endpoint", "completions"], proof: sends },
  ...SERVER_FLAGS,
  model: { args: ["--model", QWEN3_TOKENIZER], proof: sends },
  revision: revisionEntry(),
  tokenizer: { args: ["--tokenizer", QWEN3_TOKENIZER], proof: sends },
  "total-tokens": { args: ["--total-tokens", "80"], proof: sends },
  "output-len": { args: ["--output-len", "3"], proof: sends },
  // 100 ms requests every 20 ms: four overlap unless one at a time is allowed.
  "max-concurrency": {
    args: ["--max-concurrency", "1"],
    server: ["--itl-ms", "100"],
    vs: [],
    proof: (o, b) => {
      expect(probes(o).every((l) => l.concurrency <= 1.05)).toBe(true);
      expect(probes(b).some((l) => l.concurrency > 1.5)).toBe(true);
    },
  },
  pcts: { args: ["--pcts", "90"], proof: sends },
  burstiness: { args: ["--burstiness", "inf"], proof: differs((o) => probes(o).map((l) => l.burstiness)) },
  "working-set": { args: ["--pcts", "50", "--working-set", "2"], vs: ["--pcts", "50"], proof: sends },
  "flush-deadline": FLUSH_DEADLINE,
  "stall-timeout": {
    args: ["--stall-timeout", "0.3", ...BOTTOM],
    server: ["--stall-every", "2", "--stall-s", "3"],
    vs: BOTTOM,
    proof: (o, b) => {
      expect(probes(o).some((l) => (l.errors_by_kind.stall ?? 0) > 0)).toBe(true);
      expect(probes(b).every((l) => l.failed === 0)).toBe(true);
    },
  },
  // The server counts cached tokens in pages of 16; told 1, the client expects 35 where 32 come back: every probe's
  // cache check fails (exit 4) unless the tolerance lets all of them disagree.
  "cache-tolerance": {
    args: ["--total-tokens", "70", "--pcts", "50", "--page-size", "1", "--cache-tolerance", "100%"],
    vs: ["--total-tokens", "70", "--pcts", "50", "--page-size", "1"],
    server: ["--page-size", "16"],
    proof: (o, b) => expect([b.code, o.code]).toEqual([4, 0]),
  },
  "page-size": {
    args: ["--total-tokens", "70", "--pcts", "50", "--page-size", "1"],
    vs: ["--total-tokens", "70", "--pcts", "50"],
    server: ["--page-size", "16"],
    proof: (o, b) => expect([b.code, o.code]).toEqual([0, 4]),
  },
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

  search: {
    args: ["--search", "concurrency"],
    proof: (o, b) => {
      expect([result(o).search, result(b).search]).toEqual(["concurrency", "rate"]);
      expect(probes(o)[0]!.max_concurrency).toBe(50);
      expect(probes(o)[0]!.request_rate).toBe(Infinity);
    },
  },
  "num-prompts": {
    args: ["--num-prompts", "6"],
    proof: (o, b) => {
      expect(probes(o).map((l) => l.completed)).toEqual([6, 6]);
      expect(probes(b).map((l) => l.completed)).toEqual([4, 4]);
    },
  },
  duration: {
    args: ["--duration", "0.2"],
    drop: ["--num-prompts"],
    proof: (o) => {
      expect(probes(o).map((l) => l.completed)).toEqual([10, 20]); // 50 and 100 req/s for 0.2 s
    },
  },
  // The bisection from [25, 50] needs 2 steps to 40 % and 4 to 5 %, whatever the verdicts.
  precision: { args: [...SLO, "--precision", "5%"], vs: SLO, server: SLOW, proof: moreProbes },
  confirm: {
    args: ["--confirm", "3"],
    // Three probes at 100 req/s are three chances for a loaded box to send one request 10 ms late.
    until: carried,
    proof: (o, b) => {
      expect(probes(o).filter((l) => l.request_rate === 100)).toHaveLength(3);
      expect(probes(b).filter((l) => l.request_rate === 100)).toHaveLength(1);
    },
  },
  start: { args: ["--start", "10"], proof: differs((o) => probes(o)[0]!.request_rate) },
  bracket: {
    args: ["--bracket", "1:60"],
    until: carried,
    proof: (o, b) => expect([result(o).capacity_request_rate, result(b).capacity_request_rate]).toEqual([60, 100]),
  },
  require: { args: ["--require", "1000"], proof: exits(6) },
};

export const CAPACITY_PROOFS: ProofBodies = proofBodies(BASE, CAPACITY);
