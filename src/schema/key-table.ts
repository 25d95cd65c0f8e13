/**
 * THE key table: every key a warmbench JSONL line may hold, once, with its JSON shape, unit and meaning, the line
 * kinds that carry it (and where in each), and how merge makes it. The line types and key orders (lines.ts), the
 * line builder's types (build-line.ts), the merge rules (report/merge-rules.ts), the published JSON Schema
 * (document.ts) and the docs' key reference (docs/reference/keys.md, reference.ts) are all derived from it. To add a
 * key: add it here with its description, its `lines` (an ordinal per kind that carries it: keys are written in
 * ascending ordinal, so pick one between its neighbours') and its `merge` rule. To add an axis: mark its key `axis`
 * (and give axes.ts its label).
 */
import {
  cachedTokensByTierShape,
  errorEntryShape,
  evidenceShape,
  replicasShape,
  gateResultShape,
  mergedShape,
  promptDriftShape,
  roundHdrShape,
  runInfoShape,
  shardsShape,
  sweepHdrShape,
  ttftByTierShape,
  ttftFitShape,
  ttftModelShape,
  workloadShape,
  type LineEvidence,
} from "./nested.ts";
import { steadyStateShape, timelineShape } from "./timeline-shape.ts";
import { serverReconciliationShape, serverTelemetryShape } from "./telemetry-shape.ts";
import { array, bool, field, int, label, literal, nullable, num, object, pair, record, str, type Shape } from "./shape.ts";

/** The kinds of line: a sweep's point, a multi-turn round, a capacity search's result. */
export type LineKind = "sweep" | "round" | "capacity";
export const LINE_KINDS = ["sweep", "round", "capacity"] as const satisfies readonly LineKind[];

/** Where a key sits in each kind of line that carries it: an ordinal, unique in its kind; keys are written in ascending ordinal. */
type KeyLines = { readonly [K in LineKind]?: number };

/** Why a key is left out of some lines of the kinds that carry it (it is optional there; required otherwise). */
export const OPTIONAL_BECAUSE = {
  "first-line": "in a run's first line only",
  merged: "in merge's lines only",
  axis: "in the lines of the producers that add the axis only (repeat, probe, window)",
  "since-2": "in lines written since schema_version 2, and in a merge of such lines",
  replay: "in a trace replay's lines only",
  agentic: "in the lines of a replay of agentic sessions (WEKA, TraceLab) only",
  replicas: "in the lines of a run over several replicas only",
  "check-fidelity": "in the lines of a run with --check-fidelity only",
  telemetry: "in the lines of a run that scraped the servers' /metrics only (--scrape-interval not 0, a server that answers /metrics)",
} as const;
export type OptionalBecause = keyof typeof OPTIONAL_BECAUSE;

/**
 * How merge makes a key of the merged line from the lines of one point, one per run. report/merge-rules.ts
 * implements each rule for the keys that name it, and the compiler holds it to every one of them.
 */
export const MERGE_RULES = {
  first: "the first run's: the point's place or the work's shape, which every run shares (merge-agree.ts)",
  "first-or-null": "the first run's, null where it has none",
  "first-number": "the first run's number (0 where it has none)",
  text: "the first run's, as text",
  sum: "added up over the runs",
  "sum-or-null": "added up over the runs; null unless every run has a number",
  "sum-where-carried": "added up over the runs where the lines carry the key; absent where they do not",
  "null-where-carried": "not known for the union (null) where the lines carry the key; absent where they do not",
  "per-second": "what the runs did, added up, over the union's window",
  latency: "exact from the request details where merge has them; else pooled means and the merged histograms' percentiles",
  "from-intended": "from the merged histograms of the latency from the intended send",
  "reported-mean": "over the runs whose requests reported cached tokens, weighted by their requests",
  "ledger-ratio": "the summed loss over the summed available tokens of the ledger",
  max: "the worst (largest) of the runs'",
  any: "true where any run's is",
  "all-or-null": "true where every run's is, false where one is false, null otherwise",
  unknown: "not known for the union: null",
  own: "a rule of its own (report/merge-rules.ts OWN_RULES)",
  none: "not merged: merge writes it itself (run: absent; schema_version: the current)",
} as const;
export type MergeRule = keyof typeof MERGE_RULES;

export interface KeyDef {
  readonly shape: Shape<unknown>;
  /** The line kinds that carry the key, and where in each. */
  readonly lines: KeyLines;
  /** Left out of some lines of the kinds that carry it, and why; absent: in every line of those kinds. */
  readonly optional?: OptionalBecause;
  /** How merge makes the key (MERGE_RULES). */
  readonly merge: MergeRule;
  /** A round line's shape where it differs. */
  readonly roundShape?: Shape<unknown>;
  readonly unit: string | null;
  readonly doc: string;
  /** A round line's meaning where it differs. */
  readonly roundDoc?: string;
  /** One of the reference script's keys (same name, same meaning). */
  readonly script?: true;
  /** A coordinate that tells a run's lines apart (axes.ts reads and labels them). */
  readonly axis?: true;
  /** Which way is better, for a key compare judges by the key table (compare/metrics.ts KEY_METRICS). */
  readonly better?: "higher" | "lower";
  /** A count of things gone wrong: any increase from BASE to NEW fails compare (more_failures), whatever the limits. */
  readonly mustNotGrow?: true;
  /**
   * The evidence count this key is computed from (`evidence.samples.<family>`, or `evidence.requests.finished`): with
   * 0 of them the key is no evidence, and every verdict on it fails (metrics/evidence-check.ts).
   */
  readonly samples?: SampleFamily;
  /** What a run must be to measure this key at all; a gate on it is refused before anything is sent otherwise. */
  readonly measuredOnlyWith?: MeasuredOnlyWith;
}

/** The sample counts of a line's evidence block, and "finished" (completed requests: the throughputs' samples). */
export type SampleFamily = keyof LineEvidence["samples"] | "finished";

/** The runs that measure a family of keys: with --check-fidelity; over several replicas (--base-url A,B or --replicas). */
export const MEASURED_ONLY_WITH = {
  "check-fidelity": "--check-fidelity",
  replicas: "several replicas (--base-url A,B,... or --replicas)",
} as const;
export type MeasuredOnlyWith = keyof typeof MEASURED_ONLY_WITH;

type More = Omit<KeyDef, "shape" | "unit" | "doc">;
const k = <T, M extends More>(shape: Shape<T>, unit: string | null, doc: string, more: M): { shape: Shape<T>; unit: string | null; doc: string } & M => ({
  shape,
  unit,
  doc,
  ...more,
});
/** One of the reference script's keys. */
const s = <T, M extends More>(shape: Shape<T>, unit: string | null, doc: string, more: M) => k(shape, unit, doc, { script: true as const, ...more });

/** A distribution over an agentic replay's sessions. */
const AGENTIC_SPREAD = object({
  mean: field(num(), "Mean over the sessions."),
  p50: field(num(), "Median over the sessions."),
  p90: field(num(), "90th percentile over the sessions."),
  max: field(num(), "Largest over the sessions."),
});

const stat = (what: string, of: string) => `${what} ${of} over the line's successful requests.`;
const NO_SAMPLE = " null when the series has no sample (the script writes 0 there).";
/** A latency series' statistics, each given where it sits in the lines that carry it. */
const lat = (of: string, samples: SampleFamily, unit = "ms") => {
  const key =
    (what: string) =>
    <L extends KeyLines>(lines: L) =>
      s(nullable(num()), unit, stat(what, of) + NO_SAMPLE, { lines, merge: "latency", samples });
  return {
    mean: key("Mean"),
    median: key("Median"),
    std: key("Standard deviation (numpy's, ddof 0) of"),
    p90: key("90th percentile (numpy's linear) of"),
    p99: key("99th percentile (numpy's linear) of"),
  };
};
const ttft = lat("time to first token", "ttft");
const tpot = lat("time per output token after the first", "tpot");
const itl = lat("the gaps between tokens (inter-token latency)", "itl");
const e2e = lat("end-to-end latency", "e2e");
const fromIntended = (of: string) => `${of} measured from the intended send time (the schedule's), ms: what a user would have waited; null: no sample.`;
const lag = <M extends More>(stat: string, more: M) =>
  k(nullable(num()), "ms", `Schedule lag (actual - intended send), ${stat}: the client's own queueing; null: nothing sent.`, more);

export const KEYS = {
  // The reference script's keys, meaning what they mean there.
  backend: s(str(), null, 'The backend: "sglang", "vllm", "llama.cpp", "openai" (as --backend).', {
    lines: { sweep: 0, round: 80, capacity: 160 },
    merge: "first",
  }),
  dataset_name: s(str(), null, 'The prompt source, as the script names it ("warm-cache": the sweep\'s prompts).', { lines: { sweep: 10 }, merge: "first" }),
  request_rate: s(num(), "req/s", "The line's request rate; Infinity (Python's bare token) in a closed loop, where each request goes as a slot frees.", {
    lines: { sweep: 20 },
    merge: "first",
    axis: true,
  }),
  max_concurrency: s(num(), "requests", "Requests in flight at most.", { lines: { sweep: 30, round: 90 }, merge: "own" }),
  shared_prefix_pct: s(num(), "%", "Share of each prompt that is the shared (cacheable) prefix.", {
    lines: { sweep: 40, capacity: 20 },
    merge: "first",
    axis: true,
  }),
  prefix_len: s(int(), "tokens", "Length of the shared prefix.", { lines: { sweep: 50 }, merge: "first" }),
  suffix_len: s(int(), "tokens", "Length of each prompt's own suffix.", { lines: { sweep: 60 }, merge: "first" }),
  total_tokens: s(int(), "tokens", "Prompt length (prefix + suffix).", { lines: { sweep: 70, capacity: 170 }, merge: "first" }),
  num_prompts: s(int(), "requests", "Measured prompts of the line (with --duration: how many were due).", { lines: { sweep: 80 }, merge: "sum" }),
  output_len: s(int(), "tokens", "Tokens asked of every request.", { lines: { sweep: 90, round: 150, capacity: 180 }, merge: "first" }),
  completed: s(int(), "requests", "Requests that completed successfully.", { lines: { sweep: 100, round: 180 }, merge: "own" }),
  benchmark_duration: s(num(), "s", "Wall-clock window of the line: first send to last event.", { lines: { sweep: 110, round: 240 }, merge: "own" }),
  total_input: s(int(), "tokens", "Prompt tokens of the completed requests.", { lines: { sweep: 120, round: 250 }, merge: "sum" }),
  total_output: s(int(), "tokens", "Generated tokens of the completed requests, as the server counted them.", {
    lines: { sweep: 130, round: 260 },
    merge: "sum",
  }),
  total_output_retokenized: s(int(), "tokens", "Generated tokens, counted by re-tokenizing the generated text.", {
    lines: { sweep: 140, round: 270 },
    merge: "sum",
  }),
  request_throughput: s(num(), "req/s", "Completed requests per second of benchmark_duration.", {
    lines: { sweep: 150, round: 280 },
    merge: "per-second",
    samples: "finished" as const,
  }),
  input_throughput: s(num(), "tok/s", "Prompt tokens per second.", { lines: { sweep: 160, round: 290 }, merge: "per-second", samples: "finished" as const }),
  output_throughput: s(num(), "tok/s", "Generated tokens per second.", {
    lines: { sweep: 170, round: 300 },
    merge: "per-second",
    samples: "finished" as const,
  }),
  output_throughput_retokenized: s(num(), "tok/s", "Generated tokens (re-tokenized) per second.", {
    lines: { sweep: 180, round: 310 },
    merge: "per-second",
    samples: "finished" as const,
  }),
  total_throughput: s(num(), "tok/s", "Prompt and generated tokens per second.", {
    lines: { sweep: 190, round: 320 },
    merge: "per-second",
    samples: "finished" as const,
  }),
  total_throughput_retokenized: s(num(), "tok/s", "Prompt and generated (re-tokenized) tokens per second.", {
    lines: { sweep: 200, round: 330 },
    merge: "per-second",
    samples: "finished" as const,
  }),
  mean_ttft_ms: ttft.mean({ sweep: 210, round: 340 }),
  median_ttft_ms: ttft.median({ sweep: 220, round: 350 }),
  std_ttft_ms: ttft.std({ sweep: 230, round: 360 }),
  p90_ttft_ms: ttft.p90({ sweep: 240, round: 370 }),
  p99_ttft_ms: ttft.p99({ sweep: 250, round: 380 }),
  mean_tpot_ms: tpot.mean({ sweep: 260, round: 390 }),
  median_tpot_ms: tpot.median({ sweep: 270, round: 400 }),
  std_tpot_ms: tpot.std({ sweep: 280, round: 410 }),
  p90_tpot_ms: tpot.p90({ sweep: 290, round: 420 }),
  p99_tpot_ms: tpot.p99({ sweep: 300, round: 430 }),
  mean_itl_ms: itl.mean({ sweep: 310, round: 440 }),
  median_itl_ms: itl.median({ sweep: 320, round: 450 }),
  std_itl_ms: itl.std({ sweep: 330, round: 460 }),
  p90_itl_ms: itl.p90({ sweep: 340, round: 470 }),
  p99_itl_ms: itl.p99({ sweep: 350, round: 480 }),
  mean_e2e_latency_ms: e2e.mean({ sweep: 360, round: 490 }),
  median_e2e_latency_ms: e2e.median({ sweep: 370, round: 500 }),
  std_e2e_latency_ms: e2e.std({ sweep: 380, round: 510 }),
  p99_e2e_latency_ms: e2e.p99({ sweep: 390, round: 520 }),
  concurrency: s(num(), "requests", "Mean requests in flight: the sum of E2E latencies over benchmark_duration.", {
    lines: { sweep: 400, round: 530 },
    merge: "own",
    samples: "finished" as const,
  }),

  // The line's kind and place.
  type: k(literal("capacity"), null, 'The line kind: "capacity" for a capacity search\'s result; absent in a sweep line (as the script writes it).', {
    lines: { round: 0, capacity: 0 },
    merge: "first",
    roundShape: literal("round"),
    roundDoc: 'The line kind: "round" for a multi-turn round; absent in a sweep line (as the script writes it).',
  }),
  run_id: k(str(), null, "Shared by every line of one run: group lines by it.", { lines: { sweep: 410, round: 10, capacity: 10 }, merge: "own" }),
  run: k(runInfoShape, null, "The run's description; in the run's first line only.", {
    lines: { sweep: 420, round: 20 },
    merge: "none",
    optional: "first-line",
  }),
  gates: k(
    array(gateResultShape),
    null,
    "Every --gate whose scope holds this line, evaluated on its numbers; [] without gates. With --repeat, a gate judges the cell (its line at " +
      "every repeat) once, on the mean over its repeats: only the cell's last repeat carries the verdicts (value = the mean, with " +
      "`repeats` and the 95 % interval beside it); its earlier repeats carry [].",
    { lines: { sweep: 430, round: 30 }, merge: "own" },
  ),
  repeat: k(
    int(),
    null,
    "With --repeat N: which measurement of the line this is (0-based); each from a flushed, proven, warmed cache with the same prompts. Absent without --repeat.",
    { lines: { sweep: 450 }, merge: "first", optional: "axis", axis: true },
  ),
  workload: k(workloadShape, null, "What was sent, for pairing lines of two runs (warmbench compare).", { lines: { sweep: 440 }, merge: "own" }),
  // What later producers add to a sweep line's axes (absent otherwise): the engine's summarize takes them as data.
  probe: k(
    int(),
    null,
    "The probe of a capacity search (0-based, in the order sent): one measured load of the search (warmbench capacity); its load is request_rate or max_concurrency. Absent in other lines.",
    { lines: { sweep: 460 }, merge: "first", optional: "axis", axis: true },
  ),
  window: k(
    int(),
    null,
    "The time window of a trace replay (0-based, --window trace seconds each): the requests whose trace timestamp falls in it. Absent in other lines and in the replay's line for the whole trace.",
    { lines: { sweep: 470 }, merge: "first", optional: "axis", axis: true },
  ),
  round: k(int(), null, "The round (0-based, as bench_multiturn.py's round_0, round_1...): every client's turn with this index.", {
    lines: { round: 40 },
    merge: "first",
    axis: true,
  }),
  num_rounds: k(int(), "rounds", "Rounds each conversation has.", { lines: { round: 50 }, merge: "first" }),
  num_clients: k(int(), "clients", "Conversations run at once.", { lines: { round: 60 }, merge: "sum" }),
  clients_in_round: k(int(), "turns", "Turns this round was to have: the clients whose conversation was still going.", { lines: { round: 70 }, merge: "sum" }),
  round_barrier: k(bool(), null, "Whether every client finished round r before any began round r+1 (--round-barrier).", {
    lines: { round: 100 },
    merge: "first",
  }),
  ready_queue_policy: k(str(), null, "Which ready client's turn goes next (--ready-queue-policy).", { lines: { round: 110 }, merge: "first" }),
  shared_system_tokens: k(int(), "tokens", "Length of the system prompt every conversation shares.", { lines: { round: 120 }, merge: "first" }),
  first_turn_tokens: k(int(), "tokens", "Length of a conversation's first user turn.", { lines: { round: 130 }, merge: "first" }),
  turn_tokens: k(int(), "tokens", "Length of each later user turn.", { lines: { round: 140 }, merge: "first" }),

  // Requests.
  sent: k(int(), "requests", "Measured requests sent (completed + failed; cancelled ones are not counted).", {
    lines: { sweep: 480, round: 170 },
    merge: "sum",
    roundDoc: "Turns that ended (completed + failed; cancelled ones are not counted).",
  }),
  failed: k(int(), "requests", "Requests that failed.", { lines: { sweep: 490, round: 190 }, merge: "sum", mustNotGrow: true }),
  errors: k(array(errorEntryShape, { maxItems: 20 }), null, "At most 20 buckets of failures with the same kind and message, largest first.", {
    lines: { sweep: 500, round: 200 },
    merge: "own",
  }),
  errors_by_kind: k(record(int()), "requests", "Failures per kind, over all failures.", { lines: { sweep: 510, round: 210 }, merge: "own" }),
  retried_connections: k(
    int(),
    "requests",
    "Requests whose pooled connection the server had closed before any byte of the answer, sent once more on a fresh connection; their outcome is the retry's, counted as any request's.",
    { lines: { sweep: 512, round: 212 }, merge: "sum-where-carried", optional: "since-2" },
  ),
  interrupted: k(bool(), null, "The run was stopped (SIGINT/SIGTERM) while this line was measured: it holds the requests that completed.", {
    lines: { sweep: 520, round: 220 },
    merge: "any",
  }),
  evidence: k(
    evidenceShape,
    null,
    "What the line's numbers rest on: samples per metric family, requests planned / sent / finished, offered and achieved load, the cache proof, " +
      "the client's health and the runs measured. Every verdict (gates, capacity, compare, history, merge) asks src/metrics/evidence-check.ts of it: " +
      "no evidence is a fail, never a pass (docs/reference/evidence-matrix.md).",
    { lines: { sweep: 530, round: 230, capacity: 195 }, merge: "own", optional: "since-2" },
  ),
  burstiness: k(nullable(num()), null, "Gamma shape of the gaps between arrivals (1 = Poisson, Infinity = evenly spaced); null in a closed loop.", {
    lines: { sweep: 540, capacity: 190 },
    merge: "first-or-null",
  }),
  duration_limit_s: k(nullable(num()), "s", "--duration: arrivals stopped after this many seconds (num_prompts then holds how many were due); null without.", {
    lines: { sweep: 550 },
    merge: "first-or-null",
  }),
  achieved_request_rate: k(nullable(num()), "req/s", "Requests sent per second, from the start of sending to the last send; null when all went at once.", {
    lines: { sweep: 560 },
    merge: "from-intended",
  }),
  ttft_from_intended_mean_ms: k(nullable(num()), "ms", fromIntended("Mean TTFT"), {
    lines: { sweep: 570 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  ttft_from_intended_median_ms: k(nullable(num()), "ms", fromIntended("Median TTFT"), {
    lines: { sweep: 580 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  ttft_from_intended_p90_ms: k(nullable(num()), "ms", fromIntended("P90 TTFT"), {
    lines: { sweep: 590 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  ttft_from_intended_p99_ms: k(nullable(num()), "ms", fromIntended("P99 TTFT"), {
    lines: { sweep: 600 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  e2e_from_intended_mean_ms: k(nullable(num()), "ms", fromIntended("Mean E2E latency"), {
    lines: { sweep: 610 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  e2e_from_intended_median_ms: k(nullable(num()), "ms", fromIntended("Median E2E latency"), {
    lines: { sweep: 620 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  e2e_from_intended_p90_ms: k(nullable(num()), "ms", fromIntended("P90 E2E latency"), {
    lines: { sweep: 630 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  e2e_from_intended_p99_ms: k(nullable(num()), "ms", fromIntended("P99 E2E latency"), {
    lines: { sweep: 640 },
    merge: "from-intended",
    samples: "from_intended" as const,
  }),
  schedule_lag_mean_ms: lag("mean", { lines: { sweep: 650 }, merge: "from-intended", samples: "schedule_lag" as const }),
  schedule_lag_median_ms: lag("median", { lines: { sweep: 660 }, merge: "from-intended", samples: "schedule_lag" as const }),
  schedule_lag_p90_ms: lag("90th percentile", { lines: { sweep: 670 }, merge: "from-intended", samples: "schedule_lag" as const }),
  schedule_lag_p99_ms: lag("99th percentile", { lines: { sweep: 680 }, merge: "from-intended", samples: "schedule_lag" as const }),
  mean_prompt_len: k(nullable(num()), "tokens", "Mean prompt length of the round's turns (history included); null: no turn completed.", {
    lines: { round: 540 },
    merge: "own",
  }),
  max_prompt_len: k(nullable(int()), "tokens", "Longest prompt of the round's turns; null: no turn completed.", { lines: { round: 550 }, merge: "own" }),

  // The prefix cache.
  page_size: k(int(), "tokens", "Tokens per cache page: cached tokens are expected in whole pages.", {
    lines: { sweep: 690, round: 560 },
    merge: "first-number",
  }),
  expected_cached_tokens: k(int(), "tokens", "Cached tokens each request should report: the shared prefix, page-aligned.", {
    lines: { sweep: 700, round: 570 },
    merge: "own",
    roundDoc:
      "Σ over completed turns of what each could find cached with nothing evicted: the cache model's ceiling on the server that served it (its history, paged; the last answer in it but its last token where answers are cached), else the plan's history.",
  }),
  observed_cached_tokens: k(nullable(int()), "tokens", "Σ of the cached tokens the round's turns reported; null when none did.", {
    lines: { round: 580 },
    merge: "own",
  }),
  mean_cached_tokens: k(nullable(num()), "tokens", "Mean cached tokens the requests reported; null when none did.", {
    lines: { sweep: 710 },
    merge: "reported-mean",
  }),
  min_cached_tokens: k(nullable(int()), "tokens", "Fewest cached tokens a request reported; null when none did.", { lines: { sweep: 720 }, merge: "own" }),
  max_cached_tokens: k(nullable(int()), "tokens", "Most cached tokens a request reported; null when none did.", { lines: { sweep: 730 }, merge: "own" }),
  cached_tokens_mismatched: k(nullable(int()), "requests", "Requests whose reported cached tokens differ from expected; null when none reported any.", {
    lines: { sweep: 740, round: 680 },
    merge: "own",
    roundDoc: "Turns whose reported cached tokens differ from expected (approximate turns: fall below their exact part); null when none reported any.",
  }),
  cached_tokens_counts: k(array(pair(int(), int()), { maxItems: 10 }), null, "[cached_tokens, requests] pairs, most frequent first, at most 10.", {
    lines: { sweep: 750 },
    merge: "own",
  }),
  expected_hit_ratio: k(num(), "ratio", "Share of prompt tokens that should come from the cache (0..1).", {
    lines: { sweep: 760, round: 590 },
    merge: "own",
    roundShape: nullable(num()),
  }),
  observed_hit_ratio: k(nullable(num()), "ratio", "Share of prompt tokens the requests reported cached (0..1); null when none reported.", {
    lines: { sweep: 770, round: 600 },
    merge: "reported-mean",
  }),
  server_cache_hit_rate: k(nullable(num()), "ratio", "Hit rate from the server's Prometheus counters over the measured window; null without /metrics.", {
    lines: { sweep: 780, round: 610 },
    merge: "unknown",
    roundDoc: "Hit rate from the server's Prometheus counters over the round (with --round-barrier only: rounds overlap without); null without /metrics.",
  }),
  approximate_turns: k(int(), "turns", "Turns whose history holds an answer re-tokenized from text (a backend without output ids).", {
    lines: { round: 690 },
    merge: "sum",
  }),
  working_set: k(int(), "prefixes", "Distinct shared prefixes in rotation (--working-set): prompt i shares prefix i mod K.", {
    lines: { sweep: 790, round: 160, capacity: 30 },
    merge: "own",
    roundDoc: "Distinct system prompts in rotation (--working-set).",
    axis: true,
  }),
  working_set_tokens: k(int(), "tokens", "What the cache must hold for every request to hit: working_set x prefix_len.", {
    lines: { sweep: 800, round: 620 },
    merge: "own",
    roundDoc: "What the cache must hold for every turn of the round to hit: the system prompts and every history.",
  }),
  cache_capacity_tokens: k(nullable(int()), "tokens", "The server's device cache capacity (/server_info max_total_num_tokens); null: unknown.", {
    lines: { sweep: 810, round: 630 },
    merge: "first-or-null",
  }),
  host_cache_capacity_tokens: k(nullable(int()), "tokens", "The server's host-tier capacity (HiCache: hicache_ratio x the device's); null: none or unknown.", {
    lines: { sweep: 820, round: 640 },
    merge: "first-or-null",
  }),
  working_set_fits: k(nullable(bool()), null, "working_set_tokens <= the device capacity; null when the capacity is unknown.", {
    lines: { sweep: 830, round: 650 },
    merge: "own",
  }),
  cache_shortfall_requests: k(
    nullable(int()),
    "requests",
    "Successful requests that reported fewer cached tokens than expected; null when none reported any.",
    { lines: { sweep: 840, round: 660 }, merge: "sum-or-null" },
  ),
  eviction: k(nullable(bool()), null, "Some request's observed hit fell below expected; null when none reported cached tokens.", {
    lines: { sweep: 850, round: 670 },
    merge: "own",
  }),
  cached_tokens_by_tier: k(
    cachedTokensByTierShape,
    "tokens",
    "Cached prompt tokens per cache tier over the line's requests; null when the server reports no breakdown.",
    { lines: { sweep: 860, round: 700 }, merge: "own" },
  ),
  ttft_by_tier: k(ttftByTierShape, null, "TTFT of the requests each tier served (the deepest tier a prefix needed); null without the breakdown.", {
    lines: { sweep: 870, round: 710 },
    merge: "unknown",
    samples: "ttft" as const,
  }),
  // A trace replay's own (replay lines only): every request's hit predicted from what the client saw (docs/guides/replay.md).
  block_size: k(int(), "tokens", "Tokens per hash id of the replayed trace (--block-size). Replay lines only.", {
    lines: { sweep: 880 },
    merge: "first",
    optional: "replay",
  }),
  time_scale: k(nullable(num()), null, "Factor on the trace's timestamps (--time-scale); null in a closed loop (--ignore-timestamps). Replay lines only.", {
    lines: { sweep: 890 },
    merge: "first",
    optional: "replay",
  }),
  infinite_hit_ratio: k(
    nullable(num()),
    "ratio",
    "Cached tokens an infinite cache would have served (the longest prefix shared with a request whose first token had arrived when this one was sent) / prompt tokens; null in a merged line. Replay lines only.",
    { lines: { sweep: 900 }, merge: "null-where-carried", optional: "replay" },
  ),
  predicted_eviction_tokens: k(
    int(),
    "tokens",
    "Of those, the cached tokens the LRU model of the cache (cache_capacity_tokens, in pages) predicts eviction takes. Replay lines only.",
    { lines: { sweep: 910 }, merge: "sum-where-carried", optional: "replay" },
  ),
  observed_shortfall_tokens: k(int(), "tokens", "Cached tokens the server reported below the infinite cache's, summed over the requests. Replay lines only.", {
    lines: { sweep: 920 },
    merge: "sum-where-carried",
    optional: "replay",
  }),
  cache_short_requests: k(
    int(),
    "requests",
    "Requests that reported fewer cached tokens than their predicted lower bound (the model's, eviction included): unexplained shortfalls. Replay lines only.",
    { lines: { sweep: 930 }, merge: "sum-where-carried", optional: "replay" },
  ),
  cache_over_requests: k(
    int(),
    "requests",
    "Requests that reported more cached tokens than any earlier request could have given (the upper bound). Replay lines only.",
    { lines: { sweep: 940 }, merge: "sum-where-carried", optional: "replay" },
  ),
  ttft_by_cached_fraction: k(
    nullable(
      array(
        object({
          from: field(num(), "Lowest cached fraction of the bucket (cached tokens / prompt tokens)."),
          to: field(num(), "Highest (exclusive; 1 included in the last bucket)."),
          requests: field(int(), "Successful requests in the bucket that reported cached tokens."),
          median_ttft_ms: field(nullable(num()), "Their median TTFT, ms; null: none."),
        }),
      ),
    ),
    null,
    "TTFT by how much of the prompt was cached, in quartiles of the cached fraction; null in a merged line. Replay lines only.",
    { lines: { sweep: 950 }, merge: "null-where-carried", optional: "replay", samples: "ttft" as const },
  ),
  // An agentic replay's own (issue 38): the schedule's named rules and the session-level metrics (replay/agentic-metrics.ts).
  agentic: k(
    object({
      trace_format: field(str(), "The corpus's format: weka or tracelab (--trace-format, or detected)."),
      delay_rule: field(str(), "What a turn waited after the previous answer (--delay-rule): think-time, start-to-start or end-to-start."),
      spawn_rule: field(str(), "When a subagent started (--spawn-rule): result-minus-duration, wrapper-start or absolute."),
      join_rule: field(str(), "Which parent turn waited for a subagent (--join-rule): first-after-end, next-call or none."),
      max_idle_s: field(nullable(num()), "Cap on every recorded gap, trace seconds (--max-idle); null: none."),
      lanes: field(int(), "Session trees in flight at once (--sessions; by default one per trace)."),
      sessions: field(int(), "Session trees replayed in all (the corpus, or more lanes than traces: clones)."),
      start_at: field(
        nullable(object({ from: field(num(), "Lowest fraction."), to: field(num(), "Highest fraction.") })),
        "Where each lane's first session started (--start-at); null: at its start.",
      ),
      warmup_requests: field(int(), "Requests sent before t* to warm each lane's history (--start-at), off the clock and outside the line's requests."),
      jct_ms: field(nullable(AGENTIC_SPREAD), "Job completion time: a session's first send to its last end, ms; null: none measured."),
      jobs_per_hour: field(nullable(num()), "Sessions whose every request ended, per hour of the replay; null: none measured."),
      session_hit_ratio: field(nullable(AGENTIC_SPREAD), "Per session: cached tokens reported / prompt tokens of its requests that reported them."),
      session_ceiling_hit_ratio: field(
        nullable(AGENTIC_SPREAD),
        "Per session: the most an infinite cache could give (in-flight prefill counted) / the same prompt tokens: its ceiling.",
      ),
      turns_per_session: field(nullable(AGENTIC_SPREAD), "Requests per session, every chain's."),
      subagent_concurrency: field(nullable(AGENTIC_SPREAD), "Per session: the most chains (root included) with a request in flight at once."),
      ttft_by_context_tokens: field(
        array(
          object({
            from_tokens: field(int(), "Shortest prompt of the bin, tokens."),
            to_tokens: field(nullable(int()), "Longest (exclusive); null: no upper end."),
            requests: field(int(), "Successful requests in the bin."),
            median_ttft_ms: field(nullable(num()), "Their median TTFT, ms; null: none."),
          }),
        ),
        "Median TTFT by prompt length, doubling bins from 8192 tokens.",
      ),
    }),
    null,
    "An agentic replay's schedule rules and session-level metrics; null in a merged line. Agentic replay lines only.",
    { lines: { sweep: 955 }, merge: "null-where-carried", optional: "agentic" },
  ),
  // Several replicas (--base-url A,B,...): the routing and the hit-loss ledger (metrics/hit-ledger.ts).
  route: k(
    str(),
    null,
    "How each request was routed over the replicas: the client's --route (round-robin, random, least-in-flight, session, prefix, oracle), or router (a router in front, --replicas). Replica lines only.",
    { lines: { sweep: 960, round: 720 }, merge: "first", optional: "replicas" },
  ),
  replicas: k(nullable(replicasShape), null, "Per replica: its server, the requests it served and its part of the ledger; null in a merged line.", {
    lines: { sweep: 970, round: 730 },
    merge: "null-where-carried",
    optional: "replicas",
  }),
  routing_imbalance: k(nullable(num()), "ratio", "Requests of the busiest replica over the mean per replica (1: even); null: none measured.", {
    lines: { sweep: 980, round: 740 },
    merge: "null-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_requests: k(int(), "requests", "Requests in the ledger: answered, with cached tokens reported.", {
    lines: { sweep: 990, round: 750 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_unattributed_requests: k(int(), "requests", "Requests no replica is known for (behind a router whose response named none): left out of the ledger.", {
    lines: { sweep: 1000, round: 760 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_available_tokens: k(
    int(),
    "tokens",
    "The hits one infinite cache shared by every replica would certainly have given (the cache model: what was certainly inserted, anywhere, before each request was sent; warms included).",
    { lines: { sweep: 1010, round: 770 }, merge: "sum-where-carried", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_on_replica_tokens: k(int(), "tokens", "The same, counting only what the replica that served the request had served or been warmed with.", {
    lines: { sweep: 1020, round: 780 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_home_tokens: k(
    int(),
    "tokens",
    "The hits the same replicas at the same capacities would certainly have given had every request gone to its prefix's home (the replica its prefix's first request went to): the counterfactual routing loss is measured against.",
    { lines: { sweep: 1025, round: 785 }, merge: "sum-where-carried", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_modelled_tokens: k(
    int(),
    "tokens",
    "The hits the cache model guarantees on the replica that served each request, at its capacity (its /server_info or passport): the low end of each request's range.",
    { lines: { sweep: 1030, round: 790 }, merge: "sum-where-carried", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_possible_tokens: k(
    int(),
    "tokens",
    "The most hits the cache model allows on the replica that served each request: the high end of each request's range (what lies between is the server's legal choice).",
    { lines: { sweep: 1035, round: 795 }, merge: "sum-where-carried", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_delivered_tokens: k(int(), "tokens", "The cached tokens the servers reported.", {
    lines: { sweep: 1040, round: 800 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_routing_tokens: k(
    int(),
    "tokens",
    "home - modelled: hits lost to where requests were routed, against prefix affinity (0 when every request goes home).",
    {
      lines: { sweep: 1050, round: 810 },
      merge: "sum-where-carried",
      optional: "replicas",
      samples: "ledger" as const,
      measuredOnlyWith: "replicas" as const,
    },
  ),
  loss_eviction_tokens: k(int(), "tokens", "available - home: hits the replicas' caches were too small to keep, even with every request at home.", {
    lines: { sweep: 1060, round: 820 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_engine_tokens: k(int(), "tokens", "Hits below the model's guaranteed: what the engines must have held and did not deliver (0 on a correct server).", {
    lines: { sweep: 1070, round: 830 },
    merge: "sum-where-carried",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_unexplained_tokens: k(
    int(),
    "tokens",
    "Hits above the model's possible: what the engines delivered that no legal cache could hold (a capacity stated too small, or a cache the model does not know).",
    { lines: { sweep: 1075, round: 835 }, merge: "sum-where-carried", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  loss_routing_ratio: k(
    nullable(num()),
    "ratio",
    "loss_routing_tokens / ledger_available_tokens; null: nothing was available. Gate it: loss_routing_ratio<=0.05.",
    { lines: { sweep: 1080, round: 840 }, merge: "ledger-ratio", optional: "replicas", samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  loss_eviction_ratio: k(nullable(num()), "ratio", "loss_eviction_tokens / ledger_available_tokens; null: nothing was available.", {
    lines: { sweep: 1090, round: 850 },
    merge: "ledger-ratio",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_engine_ratio: k(nullable(num()), "ratio", "loss_engine_tokens / ledger_available_tokens; null: nothing was available.", {
    lines: { sweep: 1100, round: 860 },
    merge: "ledger-ratio",
    optional: "replicas",
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  // The cache-fidelity check (--check-fidelity): greedy answers after a cache hit against answers after a flush.
  fidelity_checked: k(
    int(),
    "samples",
    "Sampled prompts whose cold (after a proven flush) and warm (prefix proven cached) greedy answers were compared. --check-fidelity lines only.",
    {
      lines: { sweep: 1110, round: 870 },
      merge: "sum-where-carried",
      optional: "check-fidelity",
      samples: "fidelity" as const,
      measuredOnlyWith: "check-fidelity" as const,
    },
  ),
  fidelity_identical: k(nullable(int()), "samples", "Of those, the ones whose warm answer was token for token the cold one; null when none was compared.", {
    lines: { sweep: 1120, round: 880 },
    merge: "sum-where-carried",
    optional: "check-fidelity",
    samples: "fidelity" as const,
    measuredOnlyWith: "check-fidelity" as const,
  }),
  fidelity_near_tie: k(
    nullable(int()),
    "samples",
    "The ones that first differed at a near tie: each chosen token in the other's top list, no more than --fidelity-tie-nats apart (a numerics change on the cached path); null when none was compared.",
    {
      lines: { sweep: 1130, round: 890 },
      merge: "sum-where-carried",
      optional: "check-fidelity",
      samples: "fidelity" as const,
      measuredOnlyWith: "check-fidelity" as const,
    },
  ),
  fidelity_diverged: k(
    nullable(int()),
    "samples",
    "The ones that differed in a way no near tie explains: suspect wrong KV; null when none was compared (0 would claim a check that never looked). Gate it: fidelity_diverged==0; compare fails any increase.",
    {
      lines: { sweep: 1140, round: 900 },
      merge: "sum-where-carried",
      optional: "check-fidelity",
      mustNotGrow: true,
      samples: "fidelity" as const,
      measuredOnlyWith: "check-fidelity" as const,
    },
  ),
  fidelity_unclassified: k(
    nullable(int()),
    "samples",
    "The ones that differed where the server gave no top log-probabilities to weigh the difference (fidelity_note says why); null when none was compared.",
    {
      lines: { sweep: 1150, round: 910 },
      merge: "sum-where-carried",
      optional: "check-fidelity",
      samples: "fidelity" as const,
      measuredOnlyWith: "check-fidelity" as const,
    },
  ),
  fidelity_unproven: k(
    int(),
    "samples",
    "Sampled prompts not compared: the cold or warm cache state was not proven, or a request failed (fidelity_note says why).",
    {
      lines: { sweep: 1160, round: 920 },
      merge: "sum-where-carried",
      optional: "check-fidelity",
      samples: "fidelity" as const,
      measuredOnlyWith: "check-fidelity" as const,
    },
  ),
  fidelity_first_divergence: k(
    array(int()),
    "tokens",
    "The first differing output position (0-based) of every answer that differed, ascending: their distribution.",
    { lines: { sweep: 1170, round: 930 }, merge: "own", optional: "check-fidelity", samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_max_gap_nats: k(
    nullable(num()),
    "nats",
    "The largest log-probability gap between the two chosen tokens at a first difference; null: no difference was weighed.",
    { lines: { sweep: 1180, round: 940 }, merge: "own", optional: "check-fidelity", samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_note: k(nullable(str()), null, "Why differences are unclassified or samples unproven; null when nothing needs saying.", {
    lines: { sweep: 1190, round: 950 },
    merge: "own",
    optional: "check-fidelity",
    samples: "fidelity" as const,
    measuredOnlyWith: "check-fidelity" as const,
  }),
  cache_check: k(literal("ok", "mismatch", "unreported", "off"), null, "The verdict on the reported cached tokens against expected (--verify-cache).", {
    lines: { sweep: 1200, round: 960 },
    merge: "own",
  }),
  flushed: k(bool(), null, "Whether the cache was flushed before the line.", { lines: { sweep: 1210 }, merge: "own" }),
  flush_attempts: k(int(), "attempts", "Flush requests it took.", { lines: { sweep: 1220 }, merge: "sum" }),
  flush_verified: k(nullable(bool()), null, "A probe after the flush found 0 cached tokens; null: not probed.", {
    lines: { sweep: 1230, round: 970 },
    merge: "all-or-null",
  }),
  flush_probe_cached_tokens: k(
    nullable(int()),
    "tokens",
    "Cached tokens a probe of a sequence cached before the flush found after it (must be 0); null: not probed.",
    { lines: { sweep: 1240 }, merge: "unknown" },
  ),
  warm_verified: k(nullable(bool()), null, "The warm request reported the prefix cached afterwards; null: no warm or no report.", {
    lines: { sweep: 1250 },
    merge: "all-or-null",
  }),
  warm_cached_tokens: k(nullable(int()), "tokens", "Cached tokens the warm request found (0 after a flush proves it); null: no warm.", {
    lines: { sweep: 1260, round: 980 },
    merge: "unknown",
    roundDoc: "Cached tokens the system-prompt warm requests found after the flush (0 proves it); null: no warm.",
  }),

  // A capacity search (warmbench capacity): one line per pct after its probes.
  search: k(literal("rate", "concurrency"), null, "What the search varied: the open-loop request rate, or the closed loop's concurrency (--search).", {
    lines: { capacity: 40 },
    merge: "unknown",
  }),
  capacity_request_rate: k(
    nullable(num()),
    "req/s",
    "The highest request rate at which every gate held (0: the lowest failed), counting only the requests that finished (where a gate on failed allowed some to fail); null: undecided or a concurrency search.",
    { lines: { capacity: 50 }, merge: "unknown", better: "higher" },
  ),
  capacity_concurrency: k(
    nullable(int()),
    "requests",
    "The highest concurrency at which every gate held (0: the lowest failed); null: undecided or a rate search.",
    { lines: { capacity: 60 }, merge: "unknown", better: "higher" },
  ),
  capacity_bracket: k(
    pair(nullable(num()), nullable(num())),
    null,
    "[highest passing load, lowest failing load] the probes found; null where none was found.",
    { lines: { capacity: 70 }, merge: "unknown" },
  ),
  binding_gate: k(nullable(str()), null, "The first gate to fail at the bracket's failing end (with the value seen); null when none failed.", {
    lines: { capacity: 80 },
    merge: "unknown",
  }),
  search_gates: k(
    array(str()),
    null,
    "The gates every probe was judged by (--gate, --gates-file), as written: the SLO the capacity holds at. compare pairs two searches only when they are equal.",
    { lines: { capacity: 85 }, merge: "unknown", optional: "since-2" },
  ),
  capacity_status: k(
    literal("found", "below_min", "at_max", "cache_unproven", "interrupted", "probe_limit"),
    null,
    "found; below_min: the lowest load failed (capacity 0); at_max: the highest passed (capacity >= it); cache_unproven: a cache check failed twice at a load; interrupted; probe_limit: the votes never settled.",
    { lines: { capacity: 90 }, merge: "unknown" },
  ),
  capacity_reason: k(nullable(str()), null, "Why the capacity is 0, the maximum or unknown; null when found.", { lines: { capacity: 100 }, merge: "unknown" }),
  probes_counted: k(int(), "probes", "Probes that voted (a probe whose cache check failed does not).", { lines: { capacity: 110 }, merge: "unknown" }),
  probes_sent: k(int(), "probes", "Probes sent, cache-failed ones included.", { lines: { capacity: 120 }, merge: "unknown" }),
  search_wall_s: k(num(), "s", "Wall-clock time of this pct's search, every flush, warm and probe included.", { lines: { capacity: 130 }, merge: "unknown" }),
  precision: k(num(), "ratio", "--precision: the bracket's relative width the search stopped at, (high - low) / low.", {
    lines: { capacity: 140 },
    merge: "unknown",
  }),
  confirm: k(int(), "probes", "--confirm: agreeing probes a verdict near the boundary needed.", { lines: { capacity: 150 }, merge: "unknown" }),

  // The client's own health.
  client_loop_lag_p99_ms: k(num(), "ms", "How late a 10 ms probe timer fired on the JS thread, whatever the cause (p99).", {
    lines: { sweep: 1270, round: 990 },
    merge: "max",
  }),
  client_loop_lag_max_ms: k(num(), "ms", "How late that timer fired at most.", { lines: { sweep: 1280, round: 1000 }, merge: "max" }),
  client_own_lag_p99_ms: k(num(), "ms", "The part of that lateness the JS thread's own work explains (p99): the saturation verdict reads this.", {
    lines: { sweep: 1290, round: 1010 },
    merge: "max",
  }),
  client_js_cpu_pct: k(num(), "% of one core", "CPU of the JS thread, which stamps every event.", { lines: { sweep: 1300, round: 1020 }, merge: "max" }),
  client_http_cpu_pct: k(nullable(num()), "% of one core", "CPU of Bun's HTTP client thread; null where it cannot be read.", {
    lines: { sweep: 1310, round: 1030 },
    merge: "unknown",
  }),
  client_cpu_pct: k(num(), "% of one core", "CPU of the whole process, every thread (informative).", { lines: { sweep: 1320, round: 1040 }, merge: "max" }),
  client_saturated: k(bool(), null, "The client itself was the bottleneck: its numbers may be the client's, not the server's.", {
    lines: { sweep: 1330, round: 1050 },
    merge: "any",
  }),
  shards: k(shardsShape, null, "The shards that measured this line (how many, where, their clocks and health, which failed); null in one process.", {
    lines: { sweep: 1340, round: 1060 },
    merge: "unknown",
  }),

  // Models and histograms.
  ttft_fit: k(ttftFitShape, null, "This line's sufficient statistics of (uncached tokens, TTFT): merge them to refit the run's model.", {
    lines: { sweep: 1350 },
    merge: "own",
    samples: "ttft" as const,
  }),
  ttft_model: k(ttftModelShape, null, "The TTFT model (TTFT = fixed + slope x uncached tokens) over the run's lines up to and including this one.", {
    lines: { sweep: 1360 },
    merge: "own",
    samples: "ttft" as const,
  }),
  // The line over time (src/metrics/timeline.ts, steady-state.ts).
  steady_state: k(
    steadyStateShape,
    null,
    "The steady-state window: the longest interval in which requests in flight stay at or above 80 % of their peak (SGLang's steady-state rule; " +
      "dips under 5 ms, a slot handed from one request to the next, do not end it), and the main metrics over it, beside the whole line's; null: nothing sent.",
    { lines: { sweep: 1370, round: 1070 }, merge: "unknown" },
  ),
  timeline: k(
    timelineShape,
    null,
    "The line over time in fixed buckets from its first send (at most 120): requests sent, ended and in flight, output tokens, mean TTFT and ITL, " +
      "and the share cached, one string per figure: each bucket's value as its difference from the previous one, 1-3 base64url characters " +
      "(src/metrics/timeline-codec.ts has a 10-line Python decoder), because seven plain arrays take 3.4-4.2 KB a line, half of it separators, and these 1.1-1.3 KB; null: nothing sent.",
    { lines: { sweep: 1380, round: 1080 }, merge: "unknown" },
  ),
  // The servers' own view of the point (engine/studies/telemetry-study.ts): scraped /metrics as series, summaries, reconciliation.
  server_telemetry: k(
    serverTelemetryShape,
    null,
    "Each server's /metrics scraped during the point (--scrape-interval): KV usage, running and waiting requests in the timeline's buckets, and how many scrapes answered; null: nothing sent.",
    { lines: { sweep: 1381, round: 1081 }, merge: "null-where-carried", optional: "telemetry" },
  ),
  server_kv_usage_peak: k(
    nullable(num()),
    "ratio",
    "The highest KV cache usage (0-1) any server reported during the point; null: no server exposes it (llama.cpp).",
    {
      lines: { sweep: 1382, round: 1082 },
      merge: "own",
      optional: "telemetry",
      better: "lower",
      samples: "telemetry" as const,
    },
  ),
  server_queue_mean: k(
    nullable(num()),
    "requests",
    "Requests waiting on the servers (summed over them), the mean of the scrapes during the measured window; null: none exposed.",
    {
      lines: { sweep: 1383, round: 1083 },
      merge: "own",
      optional: "telemetry",
      better: "lower",
      samples: "telemetry" as const,
    },
  ),
  server_preemptions_per_request: k(
    nullable(num()),
    "preemptions / request",
    "Preemptions (vLLM) or retractions (SGLang) over the point per finished request; null: not exposed (llama.cpp) or nothing finished.",
    { lines: { sweep: 1384, round: 1084 }, merge: "null-where-carried", optional: "telemetry", better: "lower", samples: "telemetry" as const },
  ),
  server_reconciliation: k(
    serverReconciliationShape,
    null,
    "The servers' prompt, cached-token and request counters over the measured window against the client's own figures for the requests each served, with both figures; null: no scrape marked the measurement's start.",
    { lines: { sweep: 1385, round: 1085 }, merge: "null-where-carried", optional: "telemetry" },
  ),
  server_counters_disagree: k(
    nullable(int()),
    "counters",
    "Rows of server_reconciliation whose two figures differ beyond rounding: a server counter (or the client's view) that lies; null: not reconciled. Gate it: server_counters_disagree==0; compare fails any increase.",
    {
      lines: { sweep: 1386, round: 1086 },
      merge: "own",
      optional: "telemetry",
      better: "lower",
      mustNotGrow: true,
      samples: "telemetry" as const,
    },
  ),
  hdr: k(sweepHdrShape, null, "HDR histograms of the line's latencies, to merge runs exactly.", {
    lines: { sweep: 1390, round: 1090 },
    merge: "own",
    roundShape: roundHdrShape,
  }),
  hdr_unit: k(literal("us"), null, 'The unit of the hdr histograms: "us" (microseconds).', { lines: { sweep: 1400, round: 1100 }, merge: "own" }),

  // What produced the line.
  warmbench_version: k(str(), null, "The warmbench build that wrote the line.", { lines: { sweep: 1410, round: 1110, capacity: 200 }, merge: "text" }),
  schema_version: k(label(), null, "Version of this line format: bumped when a key changes meaning (keys added keep it).", {
    lines: { sweep: 1420, round: 1120, capacity: 210 },
    merge: "none",
  }),
  started_at: k(str(), null, "When the run started (ISO 8601, UTC).", { lines: { sweep: 1430, round: 1130, capacity: 220 }, merge: "own" }),
  model: k(str(), null, "--model: the tokenizer source (a Hugging Face id or a local path).", {
    lines: { sweep: 1440, round: 1140, capacity: 230 },
    merge: "text",
  }),
  tokenizer: k(str(), null, "The tokenizer actually loaded (its path or id).", { lines: { sweep: 1450, round: 1150 }, merge: "text" }),
  population_size: k(int(), "prompts", "Distinct prompts drawn before the line's were taken.", { lines: { sweep: 1460, round: 1160 }, merge: "first-number" }),
  seed: k(str(), null, "The seed as a decimal string (Python ints have any size).", { lines: { sweep: 1470, round: 1170, capacity: 240 }, merge: "text" }),
  base_url: k(str(), null, "The server's URL.", { lines: { sweep: 1480, round: 1180, capacity: 250 }, merge: "text" }),
  server_version: k(nullable(str()), null, "The server's version, as it reports it; null: not reported.", {
    lines: { sweep: 1490, round: 1190, capacity: 260 },
    merge: "first-or-null",
  }),
  text_mode: k(literal("cumulative", "incremental"), null, "How the server streams text: the whole text so far in every event, or only the new part.", {
    lines: { sweep: 1500, round: 1200 },
    merge: "own",
  }),
  prompt_encoding: k(literal("token_ids", "text"), null, '"token_ids", or "text": the prompts went out as the text their ids decode to (chat).', {
    lines: { sweep: 1510 },
    merge: "own",
  }),
  prompt_drift: k(promptDriftShape, null, "How text prompts came out after the server's tokenizer; null for token-id prompts.", {
    lines: { sweep: 1520 },
    merge: "unknown",
  }),
  merged: k(mergedShape, null, "Only in a line written by warmbench merge: the runs it merged, and which numbers come from histograms.", {
    lines: { sweep: 1530, round: 1210 },
    merge: "own",
    optional: "merged",
  }),
} as const satisfies Record<string, KeyDef>;

export type KeyName = keyof typeof KEYS;

/** The counts any increase of which fails compare (KeyDef.mustNotGrow), in table order. */
export const MUST_NOT_GROW_KEYS: readonly string[] = Object.entries(KEYS)
  .filter(([, d]) => (d as KeyDef).mustNotGrow === true)
  .map(([name]) => name);

/** The evidence count a key is computed from (KeyDef.samples); null for a key that rests on no count of its own. */
export function sampleFamilyOf(key: string): SampleFamily | null {
  return Object.hasOwn(KEYS, key) ? ((KEYS[key as keyof typeof KEYS] as KeyDef).samples ?? null) : null;
}

/** What a run must be to measure the key (KeyDef.measuredOnlyWith); null when any run measures it. */
export function measuredOnlyWithOf(key: string): MeasuredOnlyWith | null {
  return Object.hasOwn(KEYS, key) ? ((KEYS[key as keyof typeof KEYS] as KeyDef).measuredOnlyWith ?? null) : null;
}
