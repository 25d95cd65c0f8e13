/**
 * The every-flag tables of the measuring commands (`run`, `demo`, `multiturn`): each line runs against a mock
 * process behind a recording proxy (the demo against its own mock, so its proofs read the files it writes).
 */
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandName } from "../../../src/config/flags/types.ts";
import type { Observation } from "../../helpers/flag-proof.ts";
import { startFakeHub, type FakeHub } from "../../helpers/fake-hub.ts";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER } from "../../helpers/run-cli.ts";
import {
  detailsDiffer,
  exits,
  fails,
  proofBodies,
  sends,
  stdoutDiffers,
  verboseEntry,
  writes,
  type Entry,
  type Proof,
  type ProofBodies,
  FLUSH_DEADLINE,
  SERVER_FLAGS,
  PASSPORT_ENTRY,
  ROUTER_ENTRIES,
} from "./entries.ts";

const VERBOSE = verboseEntry(["--base-url", "http://127.0.0.1:9"]);
const SMALL = ["--num-prompts", "2", "--total-tokens", "64", "--output-len", "2", "--pcts", "0,50", "--settle", "0"];
const FILES = ["--output-file", "{dir}/o.jsonl", "--request-details", "{dir}/d.jsonl"];
const GATE = "p99_ttft_ms<=0.001";

/** What `run`, `demo` and `multiturn` share, with the server flags each has. */
function measuringEntries(kind: "run" | "demo" | "multiturn"): Record<string, Entry> {
  return {
    seed: { args: ["--seed", "7"], proof: kind === "demo" ? detailsOrPrompts : sends },
    "disable-ignore-eos": { args: ["--disable-ignore-eos"], proof: kind === "demo" ? stdoutOrLine("disable_ignore_eos") : sends },
    "output-file": { args: ["--output-file", "{dir}/other.jsonl"], proof: writes("other.jsonl") },
    "extra-request-body": { args: ["--extra-request-body", '{"max_new_tokens_hint":1}'], proof: kind === "demo" ? (o) => expect(o.code).toBe(0) : sends },
    "dump-prompts": { args: ["--dump-prompts", "{dir}/p.jsonl"], proof: writes("p.jsonl") },
    "request-details": { args: ["--request-details", "{dir}/d2.jsonl"], proof: writes("d2.jsonl") },
    settle: { args: ["--settle", "1.5"], proof: (o, b) => expect(o.wallMs).toBeGreaterThan(b.wallMs + 1000) },
    "request-timeout": { args: ["--request-timeout", "0.001"], proof: fails },
    "verify-cache": { args: ["--verify-cache", "off"], proof: kind === "demo" ? stdoutDiffers : sends },
    gate: { args: ["--gate", GATE], proof: exits(6) },
    "gates-file": {
      args: ["--gates-file", "{dir}/gates.txt"],
      setup: (dir) => writeFileSync(join(dir, "gates.txt"), `# unmeetable\n${GATE}\n`),
      proof: exits(6),
    },
    verbose: VERBOSE,
    quiet: kind === "multiturn" ? QUIET_LOG : QUIET,
    strict: strictEntry(kind),
    "server-cache": SERVER_CACHE,
  };
}

/** How the mock caches by default (SGLang's way). */
const MOCK_CACHE = "insert=prefill,answers=cached,inflight=evictable";

/** The cache model reads the stated behaviour; the run's options record what it was told (unknown: either way). */
export const SERVER_CACHE: Entry = {
  args: ["--server-cache", "insert=prefill,answers=cached,order=fcfs"],
  proof: (o, b) => {
    const told = (r: typeof o) => r.lines("o.jsonl").find((l) => l.run !== undefined)!.run.options.server_cache;
    expect(told(o)).toEqual({ insert_at: "prefill", answers_cached: true, inflight_locked: "either", order: "fcfs" });
    expect(told(b)).toEqual({ insert_at: "either", answers_cached: "either", inflight_locked: "either" });
  },
};

/** At a terminal the progress line is drawn (and left standing when a pct ends); --quiet draws none. */
const PROGRESS_LINE = /\d+\/\d+ requests, /;
const QUIET: Entry = {
  args: ["--quiet"],
  tty: true,
  proof: (o, b) => {
    expect([o.code, b.code]).toEqual([0, 0]);
    expect(b.stdout).toMatch(PROGRESS_LINE);
    expect(o.stdout).not.toMatch(PROGRESS_LINE);
  },
};

/** multiturn draws no progress line: --quiet leaves only warnings and errors on stderr, as it does in every command. */
const QUIET_LOG: Entry = {
  args: ["--quiet"],
  proof: (o, b) => {
    expect([o.code, b.code]).toEqual([0, 0]);
    // consola marks an info line "ℹ" at a terminal and "[info]" elsewhere.
    expect(b.stderr).toMatch(/ℹ|\[info\]/);
    expect(o.stderr).not.toMatch(/ℹ|\[info\]/);
  },
};

/**
 * A client saturated for real: a thousand requests started at once keep its JS thread busy far beyond the 5 ms of
 * event-loop lag the self-check allows (measured 15-80 ms of its own work, on a loaded 2-core box and an idle one
 * alike) - most of the time: on a loaded box the OS may keep the JS thread waiting instead, which is not the client's own
 * lag. So the flagged line is run again until its client saturated (at most three runs), and then it must exit 5;
 * the line without --strict exits 0 whether or not its client saturated.
 */
function strictEntry(kind: "run" | "demo" | "multiturn"): Entry {
  const burst =
    kind === "multiturn"
      ? ["--num-clients", "1000", "--max-concurrency", "0", "--num-rounds", "1"]
      : ["--num-prompts", "1000", "--max-concurrency", "0", "--pcts", "0"];
  return {
    args: ["--strict", ...burst],
    vs: burst,
    server: kind === "demo" ? undefined : ["--itl-ms", "0", "--prefill-us-per-token", "0", "--ttft-base-ms", "0"],
    until: (o) => o.lines("o.jsonl")[0]?.client_saturated === true,
    proof: (o, b) => {
      expect(b.code).toBe(0);
      expect(o.lines("o.jsonl").map((l) => l.client_saturated)).toEqual([true]);
      expect(o.code).toBe(5);
    },
  };
}

/** The demo talks to its own mock: what it sent is read from the files it writes. */
const detailsOrPrompts: Proof = (o, b) => {
  expect(o.lines("p.jsonl")).not.toEqual(b.lines("p.jsonl"));
};
const stdoutOrLine =
  (key: string): Proof =>
  (o, b) => {
    expect(JSON.stringify(o.lines("o.jsonl").map((l) => l.run?.options?.[key] ?? l[key]))).not.toBe(
      JSON.stringify(b.lines("o.jsonl").map((l) => l.run?.options?.[key] ?? l[key])),
    );
  };

const RUN_BASE = ["run", "--model", LLAMA2_TOKENIZER, "--base-url", "{url}", ...SMALL, ...FILES];
const RUN: Record<string, Entry> = {
  ...measuringEntries("run"),
  // run --history: the run lands in the database --db names (and only there).
  history: {
    args: ["--history", "--db", "{dir}/h.db"],
    proof: (o, b) => {
      expect(existsSync(join(o.dir, "h.db"))).toBe(true);
      expect(o.stderr).toContain("added to");
      expect(existsSync(join(b.dir, "h.db"))).toBe(false);
    },
  },
  db: {
    args: ["--history", "--db", "{dir}/h.db"],
    vs: ["--history", "--db", "{dir}/g.db"],
    proof: (o, b) => {
      expect(existsSync(join(o.dir, "h.db"))).toBe(true);
      expect(existsSync(join(o.dir, "g.db"))).toBe(false);
      expect(existsSync(join(b.dir, "g.db"))).toBe(true);
    },
  },
  backend: { args: ["--backend", "openai"], proof: sends },
  endpoint: { args: ["--endpoint", "completions"], proof: sends },
  ...SERVER_FLAGS,
  model: { args: ["--model", QWEN3_TOKENIZER], proof: sends },
  tokenizer: { args: ["--tokenizer", QWEN3_TOKENIZER], proof: sends },
  "num-prompts": { args: ["--num-prompts", "3"], proof: sends },
  "total-tokens": { args: ["--total-tokens", "80"], proof: sends },
  "output-len": { args: ["--output-len", "3"], proof: sends },
  "max-concurrency": {
    args: ["--max-concurrency", "1"],
    server: ["--itl-ms", "30"],
    vs: ["--max-concurrency", "2"],
    proof: (o, b) => {
      // One slot: each request starts after the one before it ended.
      const starts = (x: Observation) =>
        x
          .lines("d.jsonl")
          .filter((l) => l.pct === 0)
          .map((l) => l.start_epoch_ms)
          .sort();
      const gap = (x: Observation) => starts(x)[1]! - starts(x)[0]!;
      expect(gap(o)).toBeGreaterThan(25);
      expect(gap(b)).toBeLessThan(25);
    },
  },
  pcts: { args: ["--pcts", "0"], proof: sends },
  "request-rate": {
    args: ["--request-rate", "20"],
    proof: (o, b) => {
      const intended = (x: Observation) =>
        x
          .lines("d.jsonl")
          .filter((l) => l.pct === 0)
          .map((l) => l.intended_epoch_ms);
      expect(new Set(intended(o)).size).toBe(2);
      expect(new Set(intended(b)).size).toBe(1);
    },
  },
  burstiness: {
    args: ["--request-rate", "20", "--burstiness", "inf", "--num-prompts", "4"],
    vs: ["--request-rate", "20", "--num-prompts", "4"],
    proof: (o, b) => {
      const gaps = (x: Observation) => {
        const t = x
          .lines("d.jsonl")
          .filter((l) => l.pct === 0)
          .map((l) => l.intended_epoch_ms)
          .sort((p, q) => p - q);
        return t.slice(1).map((v, i) => Math.round(v - t[i]!));
      };
      expect(new Set(gaps(o)).size).toBe(1);
      expect(gaps(o)).not.toEqual(gaps(b));
    },
  },
  duration: { args: ["--request-rate", "40", "--duration", "0.2"], drop: ["--num-prompts"], proof: sends },
  "working-set": { args: ["--working-set", "2"], proof: sends },
  // Every line twice, numbered; and stopped after 2 of 4 repeats once the CV is below 1.5 (two positive values
  // never have a CV above √2, so the stop at 2 does not depend on the machine's noise).
  repeat: {
    args: ["--repeat", "2"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl").map((l) => l.repeat)).toEqual([0, 1, 0, 1]);
      expect(b.lines("o.jsonl").map((l) => l.repeat)).toEqual([undefined, undefined]);
    },
  },
  // Two replicas (one mock behind two addresses): the line says how they were routed, and the session hash sends both
  // prompts of the one prefix group to one of them where round-robin alternates.
  route: {
    args: ["--base-url", "{url},{url2}", "--route", "session"],
    vs: ["--base-url", "{url},{url2}"],
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(o.lines("o.jsonl").map((l) => l.route)).toEqual(["session", "session"]);
      expect(b.lines("o.jsonl").map((l) => l.route)).toEqual(["round-robin", "round-robin"]);
      expect(
        o
          .lines("o.jsonl")[1]!
          .replicas.map((r: { requests: number }) => r.requests)
          .sort(),
      ).toEqual([0, 2]);
      expect(b.lines("o.jsonl")[1]!.replicas.map((r: { requests: number }) => r.requests)).toEqual([1, 1]);
    },
  },
  // Two replicas (one mock behind two addresses), round-robin: the prefix is warmed where its first prompt goes, or on both.
  "warm-replicas": {
    args: ["--base-url", "{url},{url2}", "--warm-replicas", "all"],
    vs: ["--base-url", "{url},{url2}"],
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      const warms = (r: typeof o) =>
        r.requests.filter((q) => q.path === "/generate" && q.body !== "" && JSON.parse(q.body).sampling_params?.max_new_tokens === 1).length;
      expect(warms(o)).toBeGreaterThan(warms(b));
      expect(o.lines("o.jsonl")[0]!.run.options.warm_replicas).toBe("all");
    },
  },
  passport: PASSPORT_ENTRY((o) => o.lines("o.jsonl")[1]!),
  ...ROUTER_ENTRIES((o) => o.lines("o.jsonl")[1]!),
  // The check sends its own unmeasured requests after each line and writes its keys; without it the lines have none.
  "check-fidelity": {
    args: ["--check-fidelity"],
    proof: (o, b) => {
      expect(o.code).toBe(0);
      expect(o.lines("o.jsonl").map((l) => l.fidelity_checked + l.fidelity_unproven)).toEqual([4, 4]);
      expect(o.lines("o.jsonl")[1]!.fidelity_identical).toBe(4);
      expect(b.lines("o.jsonl").map((l) => l.fidelity_checked)).toEqual([undefined, undefined]);
      expect(o.requests.length).toBeGreaterThan(b.requests.length);
    },
  },
  "fidelity-sample": {
    args: ["--check-fidelity", "--fidelity-sample", "2"],
    vs: ["--check-fidelity"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl").map((l) => l.fidelity_checked + l.fidelity_unproven)).toEqual([2, 2]);
      expect(b.lines("o.jsonl").map((l) => l.fidelity_checked + l.fidelity_unproven)).toEqual([4, 4]);
    },
  },
  // The mock flips a near-tied token (0.01 nats) on a hit: a threshold below that calls the flip a divergence.
  "fidelity-tie-nats": {
    args: ["--check-fidelity", "--output-len", "6", "--fidelity-tie-nats", "0.001"],
    vs: ["--check-fidelity", "--output-len", "6"],
    server: ["--fault-tie-flip"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl")[1]).toMatchObject({ fidelity_diverged: 4, fidelity_near_tie: 0 });
      expect(b.lines("o.jsonl")[1]).toMatchObject({ fidelity_diverged: 0, fidelity_near_tie: 4 });
    },
  },
  "repeat-until-cv": {
    args: ["--repeat", "4", "--repeat-until-cv", "150%"],
    vs: ["--repeat", "4"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl").map((l) => l.repeat)).toEqual([0, 1, 0, 1]);
      expect(b.lines("o.jsonl").map((l) => l.repeat)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
    },
  },
  "flush-deadline": FLUSH_DEADLINE,
  "stall-timeout": {
    args: ["--stall-timeout", "0.3", "--pcts", "0"],
    server: ["--stall-every", "2", "--stall-s", "3"],
    vs: [],
    proof: (o) => {
      expect(o.code).toBe(3);
      expect(o.lines("d.jsonl").some((l) => l.failure_kind === "stall")).toBe(true);
    },
  },
  flush: { args: ["--flush", "none"], proof: sends },
  // The server counts cached tokens in pages of 16; told 1, the client expects 35 where 32 come back.
  "cache-tolerance": {
    args: ["--total-tokens", "70", "--page-size", "1", "--verify-cache", "strict", "--cache-tolerance", "100%"],
    vs: ["--total-tokens", "70", "--page-size", "1", "--verify-cache", "strict"],
    server: ["--page-size", "16"],
    proof: (o, b) => {
      expect(b.code).toBe(4);
      expect(o.code).toBe(0);
    },
  },
  workers: { args: ["--workers", "2"], proof: (o) => expect(new Set(o.lines("o.jsonl")[0]!.shards.ranks.map((s: any) => s.pid)).size).toBe(2) },
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
  "page-size": {
    args: ["--total-tokens", "70", "--verify-cache", "strict", "--page-size", "1"],
    vs: ["--total-tokens", "70", "--verify-cache", "strict"],
    server: ["--page-size", "16"],
    proof: (o, b) => {
      expect(b.code).toBe(0);
      expect(o.code).toBe(4);
    },
  },
};

/** Server telemetry's flags (issue 39): one study for every measuring command (engine/studies/telemetry-study.ts). */
const TELEMETRY_PROVEN = {
  "scrape-interval": "test/integration/telemetry.test.ts: every line's server_telemetry at 250ms, none with 0, under 250ms refused",
  "scrape-all": "test/integration/telemetry.test.ts: unknown_families with it, absent without",
  "serve-metrics":
    "test/integration/serve-metrics.test.ts: a real Prometheus scrapes the binary's run (every measuring command wraps its run alike: cli/served-metrics.ts)",
};

/** Flags whose proof needs several processes or a hub: proven in the test named beside each. */
export const PROVEN_ELSEWHERE: Partial<Record<CommandName, Record<string, string>>> = {
  run: {
    "keep-going": "test/integration/outputs.test.ts: a full disk under --request-details stops the points still to measure, unless --keep-going",
    ...TELEMETRY_PROVEN,
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
    shard: "test/integration/workers.test.ts: three processes started by hand make one result",
    coordinator: "test/integration/workers.test.ts: three processes started by hand make one result",
    revision: "test/integration/security.test.ts: a repo-id tokenizer from the fake hub",
  },
  demo: {
    "keep-going": "test/integration/outputs.test.ts: a full disk under --request-details stops the points still to measure, unless --keep-going",
    ...TELEMETRY_PROVEN,
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
  },
  capacity: {
    ...TELEMETRY_PROVEN,
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
  },
  replay: {
    "trace-format": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    "delay-rule": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    "spawn-rule": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    "join-rule": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    "max-idle": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    sessions: "test/integration/agentic-flags.test.ts: each moves what replay sends",
    "start-at": "test/integration/agentic-flags.test.ts: each moves what replay sends",
    ...TELEMETRY_PROVEN,
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
  },
  mock: { "fault-metrics-undercount": "test/integration/telemetry.test.ts: the cached-token counter lies: server_counters_disagree 1, both figures on stderr" },
  compare: {
    "allow-inconclusive": "test/integration/compare-repeats.test.ts: an interval straddling the limit is inconclusive: exit 8; --allow-inconclusive accepts it",
  },
  passport: {
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
    revision:
      "read by the same parseServerTarget as run's (src/cli/options.ts); proven there: test/integration/security.test.ts, a repo-id tokenizer from the fake hub",
  },
  multiturn: {
    ...TELEMETRY_PROVEN,
    "sse-line-max-mib": "test/integration/hostile-server.test.ts: a server whose SSE line never ends is read to the limit given",
    "control-body-max-mib": "test/integration/hostile-server.test.ts: a /server_info body that never ends is read to the limit given",
    shard: "test/integration/multiturn-shards.test.ts: three processes started by hand make one result over all their turns",
    coordinator: "test/integration/multiturn-shards.test.ts: three processes started by hand make one result over all their turns",
  },
};

const DEMO_BASE = ["demo", ...SMALL, ...FILES, "--dump-prompts", "{dir}/p.jsonl"];
const DEMO: Record<string, Entry> = {
  ...measuringEntries("demo"),
  model: { args: ["--model", LLAMA2_TOKENIZER], proof: detailsOrPrompts },
  "num-prompts": { args: ["--num-prompts", "3"], proof: detailsDiffer },
  "total-tokens": { args: ["--total-tokens", "80"], proof: detailsDiffer },
  "output-len": { args: ["--output-len", "3"], proof: detailsDiffer },
  pcts: { args: ["--pcts", "0"], proof: detailsDiffer },
  "request-rate": RUN["request-rate"]!,
  burstiness: RUN.burstiness!,
  duration: { args: ["--request-rate", "40", "--duration", "0.2"], drop: ["--num-prompts"], proof: detailsDiffer },
  "stall-timeout": { args: ["--stall-timeout", "0.001"], proof: fails },
  workers: RUN.workers!,
  backend: { args: ["--backend", "openai"], proof: (o, b) => expect(o.lines("o.jsonl")[0]!.backend).not.toBe(b.lines("o.jsonl")[0]!.backend) },
  // The demo's mock answers each endpoint; where the requests went is the engine the line records.
  endpoint: {
    args: ["--endpoint", "chat"],
    proof: (o, b) => {
      expect(o.code).toBe(0);
      // The run's facts are in its first line.
      expect(o.lines("o.jsonl")[0]!.run.engine.endpoint).toBe("/v1/chat/completions");
      expect(b.lines("o.jsonl")[0]!.run.engine.endpoint).toBe("/generate");
    },
  },
  "max-concurrency": {
    args: ["--max-concurrency", "1", "--output-len", "8"],
    vs: ["--output-len", "8"],
    proof: (o, b) => {
      // One slot: the second request starts once the first has ended; with the demo's 4 both start at once.
      const pair = (x: Observation) =>
        x
          .lines("d.jsonl")
          .filter((l) => l.pct === 0)
          .sort((p, q) => p.start_epoch_ms - q.start_epoch_ms);
      const [first, second] = pair(o);
      expect(second!.start_epoch_ms).toBeGreaterThanOrEqual(first!.start_epoch_ms + first!.latency_ms - 1);
      const [bFirst, bSecond] = pair(b);
      expect(bSecond!.start_epoch_ms).toBeLessThan(bFirst!.start_epoch_ms + bFirst!.latency_ms / 2);
    },
  },
  flush: {
    args: ["--flush", "none"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl").map((l) => l.flushed)).toEqual([false, false]);
      expect(b.lines("o.jsonl").map((l) => l.flushed)).toEqual([true, true]);
    },
  },
  // Unflushed, the second rate's line meets the first's prompts in the cache: more cached tokens than expected.
  "cache-tolerance": {
    args: ["--pcts", "0", "--request-rate", "20,40", "--flush", "none", "--verify-cache", "strict", "--cache-tolerance", "100%"],
    vs: ["--pcts", "0", "--request-rate", "20,40", "--flush", "none", "--verify-cache", "strict"],
    proof: (o, b) => {
      expect(b.code).toBe(4);
      expect(o.code).toBe(0);
    },
  },
};

const HUB_REPO = "every-flag/tokenizer";
let hub: FakeHub | null = null;

/** The fake hub's environment, with a fresh cache for each line (so nothing is found there). */
async function hubEnv(dir: string): Promise<Record<string, string>> {
  hub ??= startFakeHub({ [`${HUB_REPO}/tokenizer.json`]: readFileSync(LLAMA2_TOKENIZER) }, { revisions: ["v1"] });
  return { HF_ENDPOINT: hub.url, HF_HUB_CACHE: join(dir, "hf-cache"), HF_HUB_OFFLINE: "0" };
}

const MT_BASE = [
  "multiturn",
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  "{url}",
  "--num-clients",
  "2",
  "--num-rounds",
  "2",
  "--turn-tokens",
  "16",
  "--output-len",
  "2",
  "--settle",
  "0",
  ...FILES,
];
const MT: Record<string, Entry> = {
  passport: PASSPORT_ENTRY((o) => o.lines("o.jsonl")[0]!),
  ...ROUTER_ENTRIES((o) => o.lines("o.jsonl")[1]!),
  // Two replicas (one mock behind two addresses): by conversation (session) each keeps its replica; round-robin alternates.
  route: {
    // Three conversations over two replicas: round-robin moves at least one of them between its turns.
    args: ["--base-url", "{url},{url2}", "--num-clients", "3", "--route", "session"],
    vs: ["--base-url", "{url},{url2}", "--num-clients", "3"],
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(o.lines("o.jsonl").map((l) => l.route)).toEqual(["session", "session"]);
      expect(b.lines("o.jsonl").map((l) => l.route)).toEqual(["round-robin", "round-robin"]);
      const replicasOf = (x: Observation, client: number) =>
        new Set(
          x
            .lines("d.jsonl")
            .filter((d) => d.client === client)
            .map((d) => d.replica),
        ).size;
      expect([0, 1, 2].map((c) => replicasOf(o, c))).toEqual([1, 1, 1]);
      expect([0, 1, 2].map((c) => replicasOf(b, c)).some((n) => n > 1)).toBe(true);
    },
  },
  // After the last round only: that line carries the check; the rounds before it do not.
  "check-fidelity": {
    args: ["--check-fidelity"],
    proof: (o, b) => {
      expect(o.code).toBe(0);
      expect(o.lines("o.jsonl").map((l) => l.fidelity_checked)).toEqual([undefined, 2]);
      expect(b.lines("o.jsonl").map((l) => l.fidelity_checked)).toEqual([undefined, undefined]);
    },
  },
  "fidelity-sample": {
    args: ["--check-fidelity", "--fidelity-sample", "1"],
    vs: ["--check-fidelity"],
    proof: (o, b) => {
      expect([o.lines("o.jsonl")[1]!.fidelity_checked, b.lines("o.jsonl")[1]!.fidelity_checked]).toEqual([1, 2]);
    },
  },
  "fidelity-tie-nats": {
    args: ["--check-fidelity", "--output-len", "6", "--fidelity-tie-nats", "0.001"],
    vs: ["--check-fidelity", "--output-len", "6"],
    server: ["--fault-tie-flip"],
    proof: (o, b) => {
      expect(o.lines("o.jsonl")[1]).toMatchObject({ fidelity_diverged: 2, fidelity_near_tie: 0 });
      expect(b.lines("o.jsonl")[1]).toMatchObject({ fidelity_diverged: 0, fidelity_near_tie: 2 });
    },
  },
  ...measuringEntries("multiturn"),
  workers: {
    args: ["--workers", "2"],
    proof: (o) => {
      const ranks = o.lines("o.jsonl")[0]!.shards.ranks;
      expect(ranks.length).toBe(2);
      expect(ranks.every((r: any) => r.sent > 0)).toBe(true);
    },
  },
  backend: { args: ["--backend", "openai"], proof: sends },
  "base-url": RUN["base-url"]!,
  host: RUN.host!,
  port: RUN.port!,
  model: RUN.model!,
  tokenizer: RUN.tokenizer!,
  "output-len": RUN["output-len"]!,
  "num-clients": { args: ["--num-clients", "3"], proof: sends },
  "num-rounds": { args: ["--num-rounds", "3"], proof: sends },
  "turn-tokens": { args: ["--turn-tokens", "20"], proof: sends },
  "first-turn-tokens": { args: ["--first-turn-tokens", "30"], proof: sends },
  "shared-system-tokens": { args: ["--shared-system-tokens", "32"], proof: sends },
  "working-set": { args: ["--shared-system-tokens", "32", "--working-set", "2"], vs: ["--shared-system-tokens", "32"], proof: sends },
  flush: RUN.flush!,
  "flush-deadline": RUN["flush-deadline"]!,
  "stall-timeout": { args: ["--stall-timeout", "0.3"], server: ["--stall-every", "2", "--stall-s", "3"], vs: [], proof: fails },
  "api-key": RUN["api-key"]!,
  "served-model-name": RUN["served-model-name"]!,
  "ready-queue-policy": {
    args: ["--ready-queue-policy", "round-robin", "--num-clients", "4", "--max-concurrency", "1"],
    vs: ["--num-clients", "4", "--max-concurrency", "1"],
    proof: sends,
  },
  "think-time": { args: ["--think-time", "0.5"], proof: (o, b) => expect(o.wallMs).toBeGreaterThan(b.wallMs + 300) },
  "max-concurrency": {
    args: ["--max-concurrency", "1"],
    server: ["--itl-ms", "30"],
    vs: ["--max-concurrency", "2"],
    proof: (o, b) => {
      const firstRound = (x: Observation) =>
        x
          .lines("d.jsonl")
          .filter((l) => l.round === 0)
          .map((l) => l.start_epoch_ms)
          .sort();
      const gap = (x: Observation) => firstRound(x)[1]! - firstRound(x)[0]!;
      expect(gap(o)).toBeGreaterThan(25);
      expect(gap(b)).toBeLessThan(25);
    },
  },
  // The mock's behaviour stated, so the cache model expects each turn's history exactly (unknown, a history without
  // its answer is as legal as one with it, and a wrong page size would hide inside that range).
  "cache-tolerance": {
    ...RUN["cache-tolerance"]!,
    args: ["--page-size", "1", "--verify-cache", "strict", "--server-cache", MOCK_CACHE, "--cache-tolerance", "100%"],
    vs: ["--page-size", "1", "--verify-cache", "strict", "--server-cache", MOCK_CACHE],
  },
  "page-size": {
    ...RUN["page-size"]!,
    args: ["--verify-cache", "strict", "--server-cache", MOCK_CACHE, "--page-size", "1"],
    vs: ["--verify-cache", "strict", "--server-cache", MOCK_CACHE],
  },
  // Four clients, one slot: the seeded random queue lets a client's second turn go before another's first.
  "round-barrier": {
    args: ["--round-barrier", "--num-clients", "4", "--max-concurrency", "1"],
    vs: ["--num-clients", "4", "--max-concurrency", "1"],
    proof: (o, b) => {
      const overlap = (x: Observation) => {
        const turns = x.lines("d.jsonl");
        const lastEnd = Math.max(...turns.filter((l) => l.round === 0).map((l) => l.start_epoch_ms + l.latency_ms));
        return Math.min(...turns.filter((l) => l.round === 1).map((l) => l.start_epoch_ms)) < lastEnd;
      };
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(overlap(o)).toBe(false);
      expect(overlap(b)).toBe(true);
    },
  },
  revision: revisionEntry(),
};

/**
 * --revision of any command that loads a tokenizer by repo id: the fake hub has it at revision v1 only, so the
 * default (main) is not found.
 */
export function revisionEntry(): Entry {
  return {
    args: ["--model", HUB_REPO, "--revision", "v1"],
    vs: ["--model", HUB_REPO],
    env: hubEnv,
    proof: (o, b) => {
      expect(b.code).not.toBe(0);
      expect(o.code).toBe(0);
      expect(hub!.requests.some((r) => r.path === `/${HUB_REPO}/resolve/v1/tokenizer.json`)).toBe(true);
    },
  };
}

export async function stopHub(): Promise<void> {
  await hub?.stop();
  hub = null;
}

export const MEASURING: Record<"run" | "demo" | "multiturn", ProofBodies> = {
  run: proofBodies(RUN_BASE, RUN),
  demo: proofBodies(DEMO_BASE, DEMO),
  multiturn: proofBodies(MT_BASE, MT),
};
