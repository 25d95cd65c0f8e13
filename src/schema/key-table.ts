/**
 * THE key table: every key a warmbench JSONL line may hold, once, with its JSON shape, unit and meaning. The line
 * types (lines.ts), the published JSON Schema (document.ts) and the docs' key reference (docs/reference/keys.md,
 * reference.ts) are all generated from it. To add a key: add it here with its description, and name it in the order
 * list of each line kind that carries it (lines.ts). To add an axis: mark its key `axis` (and give axes.ts its label).
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
import { array, bool, field, int, label, literal, nullable, num, object, pair, record, str, type Shape } from "./shape.ts";

export interface KeyDef {
  readonly shape: Shape<unknown>;
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
const k = <T, M extends More = {}>(shape: Shape<T>, unit: string | null, doc: string, more?: M): { shape: Shape<T>; unit: string | null; doc: string } & M =>
  ({ shape, unit, doc, ...more }) as { shape: Shape<T>; unit: string | null; doc: string } & M;
/** One of the reference script's keys. */
const s = <T, M extends More = {}>(shape: Shape<T>, unit: string | null, doc: string, more?: M) => k(shape, unit, doc, { script: true as const, ...more });

const stat = (what: string, of: string) => `${what} ${of} over the line's successful requests.`;
const NO_SAMPLE = " null when the series has no sample (the script writes 0 there).";
const lat = (of: string, samples: SampleFamily, unit = "ms") => ({
  mean: s(nullable(num()), unit, stat("Mean", of) + NO_SAMPLE, { samples }),
  median: s(nullable(num()), unit, stat("Median", of) + NO_SAMPLE, { samples }),
  std: s(nullable(num()), unit, stat("Standard deviation (numpy's, ddof 0) of", of) + NO_SAMPLE, { samples }),
  p90: s(nullable(num()), unit, stat("90th percentile (numpy's linear) of", of) + NO_SAMPLE, { samples }),
  p99: s(nullable(num()), unit, stat("99th percentile (numpy's linear) of", of) + NO_SAMPLE, { samples }),
});
const ttft = lat("time to first token", "ttft");
const tpot = lat("time per output token after the first", "tpot");
const itl = lat("the gaps between tokens (inter-token latency)", "itl");
const e2e = lat("end-to-end latency", "e2e");
const fromIntended = (of: string) => `${of} measured from the intended send time (the schedule's), ms: what a user would have waited; null: no sample.`;
const lag = <M extends More>(stat: string, more: M) =>
  k(nullable(num()), "ms", `Schedule lag (actual - intended send), ${stat}: the client's own queueing; null: nothing sent.`, more);

export const KEYS = {
  // The reference script's keys, meaning what they mean there.
  backend: s(str(), null, 'The backend: "sglang", "vllm", "llama.cpp", "openai" (as --backend).'),
  dataset_name: s(str(), null, 'The prompt source, as the script names it ("warm-cache": the sweep\'s prompts).'),
  request_rate: s(num(), "req/s", "The line's request rate; Infinity (Python's bare token) in a closed loop, where each request goes as a slot frees.", {
    axis: true,
  }),
  max_concurrency: s(num(), "requests", "Requests in flight at most."),
  shared_prefix_pct: s(num(), "%", "Share of each prompt that is the shared (cacheable) prefix.", { axis: true }),
  prefix_len: s(int(), "tokens", "Length of the shared prefix."),
  suffix_len: s(int(), "tokens", "Length of each prompt's own suffix."),
  total_tokens: s(int(), "tokens", "Prompt length (prefix + suffix)."),
  num_prompts: s(int(), "requests", "Measured prompts of the line (with --duration: how many were due)."),
  output_len: s(int(), "tokens", "Tokens asked of every request."),
  completed: s(int(), "requests", "Requests that completed successfully."),
  benchmark_duration: s(num(), "s", "Wall-clock window of the line: first send to last event."),
  total_input: s(int(), "tokens", "Prompt tokens of the completed requests."),
  total_output: s(int(), "tokens", "Generated tokens of the completed requests, as the server counted them."),
  total_output_retokenized: s(int(), "tokens", "Generated tokens, counted by re-tokenizing the generated text."),
  request_throughput: s(num(), "req/s", "Completed requests per second of benchmark_duration.", { samples: "finished" as const }),
  input_throughput: s(num(), "tok/s", "Prompt tokens per second.", { samples: "finished" as const }),
  output_throughput: s(num(), "tok/s", "Generated tokens per second.", { samples: "finished" as const }),
  output_throughput_retokenized: s(num(), "tok/s", "Generated tokens (re-tokenized) per second.", { samples: "finished" as const }),
  total_throughput: s(num(), "tok/s", "Prompt and generated tokens per second.", { samples: "finished" as const }),
  total_throughput_retokenized: s(num(), "tok/s", "Prompt and generated (re-tokenized) tokens per second.", { samples: "finished" as const }),
  mean_ttft_ms: ttft.mean,
  median_ttft_ms: ttft.median,
  std_ttft_ms: ttft.std,
  p90_ttft_ms: ttft.p90,
  p99_ttft_ms: ttft.p99,
  mean_tpot_ms: tpot.mean,
  median_tpot_ms: tpot.median,
  std_tpot_ms: tpot.std,
  p90_tpot_ms: tpot.p90,
  p99_tpot_ms: tpot.p99,
  mean_itl_ms: itl.mean,
  median_itl_ms: itl.median,
  std_itl_ms: itl.std,
  p90_itl_ms: itl.p90,
  p99_itl_ms: itl.p99,
  mean_e2e_latency_ms: e2e.mean,
  median_e2e_latency_ms: e2e.median,
  std_e2e_latency_ms: e2e.std,
  p99_e2e_latency_ms: e2e.p99,
  concurrency: s(num(), "requests", "Mean requests in flight: the sum of E2E latencies over benchmark_duration.", { samples: "finished" as const }),

  // The line's kind and place.
  type: k(literal("capacity"), null, 'The line kind: "capacity" for a capacity search\'s result; absent in a sweep line (as the script writes it).', {
    roundShape: literal("round"),
    roundDoc: 'The line kind: "round" for a multi-turn round; absent in a sweep line (as the script writes it).',
  }),
  run_id: k(str(), null, "Shared by every line of one run: group lines by it."),
  run: k(runInfoShape, null, "The run's description; in the run's first line only."),
  gates: k(
    array(gateResultShape),
    null,
    "Every --gate whose scope holds this line, evaluated on its numbers; [] without gates. With --repeat, a gate judges the cell (its line at " +
      "every repeat) once, on the mean over its repeats: only the cell's last repeat carries the verdicts (value = the mean, with " +
      "`repeats` and the 95 % interval beside it); its earlier repeats carry [].",
  ),
  repeat: k(
    int(),
    null,
    "With --repeat N: which measurement of the line this is (0-based); each from a flushed, proven, warmed cache with the same prompts. Absent without --repeat.",
    {
      axis: true,
    },
  ),
  workload: k(workloadShape, null, "What was sent, for pairing lines of two runs (warmbench compare)."),
  // What later producers add to a sweep line's axes (absent otherwise): the engine's summarize takes them as data.
  probe: k(
    int(),
    null,
    "The probe of a capacity search (0-based, in the order sent): one measured load of the search (warmbench capacity); its load is request_rate or max_concurrency. Absent in other lines.",
    {
      axis: true,
    },
  ),
  window: k(
    int(),
    null,
    "The time window of a trace replay (0-based, --window trace seconds each): the requests whose trace timestamp falls in it. Absent in other lines and in the replay's line for the whole trace.",
    {
      axis: true,
    },
  ),
  round: k(int(), null, "The round (0-based, as bench_multiturn.py's round_0, round_1...): every client's turn with this index.", {
    axis: true,
  }),
  num_rounds: k(int(), "rounds", "Rounds each conversation has."),
  num_clients: k(int(), "clients", "Conversations run at once."),
  clients_in_round: k(int(), "turns", "Turns this round was to have: the clients whose conversation was still going."),
  round_barrier: k(bool(), null, "Whether every client finished round r before any began round r+1 (--round-barrier)."),
  ready_queue_policy: k(str(), null, "Which ready client's turn goes next (--ready-queue-policy)."),
  shared_system_tokens: k(int(), "tokens", "Length of the system prompt every conversation shares."),
  first_turn_tokens: k(int(), "tokens", "Length of a conversation's first user turn."),
  turn_tokens: k(int(), "tokens", "Length of each later user turn."),

  // Requests.
  sent: k(int(), "requests", "Measured requests sent (completed + failed; cancelled ones are not counted).", {
    roundDoc: "Turns that ended (completed + failed; cancelled ones are not counted).",
  }),
  failed: k(int(), "requests", "Requests that failed.", { mustNotGrow: true }),
  errors: k(array(errorEntryShape, { maxItems: 20 }), null, "At most 20 buckets of failures with the same kind and message, largest first."),
  errors_by_kind: k(record(int()), "requests", "Failures per kind, over all failures."),
  interrupted: k(bool(), null, "The run was stopped (SIGINT/SIGTERM) while this line was measured: it holds the requests that completed."),
  evidence: k(
    evidenceShape,
    null,
    "What the line's numbers rest on: samples per metric family, requests planned / sent / finished, offered and achieved load, the cache proof, " +
      "the client's health and the runs measured. Every verdict (gates, capacity, compare, history, merge) asks src/metrics/evidence-check.ts of it: " +
      "no evidence is a fail, never a pass (docs/reference/evidence-matrix.md).",
  ),
  burstiness: k(nullable(num()), null, "Gamma shape of the gaps between arrivals (1 = Poisson, Infinity = evenly spaced); null in a closed loop."),
  duration_limit_s: k(nullable(num()), "s", "--duration: arrivals stopped after this many seconds (num_prompts then holds how many were due); null without."),
  achieved_request_rate: k(nullable(num()), "req/s", "Requests sent per second, from the start of sending to the last send; null when all went at once."),
  ttft_from_intended_mean_ms: k(nullable(num()), "ms", fromIntended("Mean TTFT"), { samples: "from_intended" as const }),
  ttft_from_intended_median_ms: k(nullable(num()), "ms", fromIntended("Median TTFT"), { samples: "from_intended" as const }),
  ttft_from_intended_p90_ms: k(nullable(num()), "ms", fromIntended("P90 TTFT"), { samples: "from_intended" as const }),
  ttft_from_intended_p99_ms: k(nullable(num()), "ms", fromIntended("P99 TTFT"), { samples: "from_intended" as const }),
  e2e_from_intended_mean_ms: k(nullable(num()), "ms", fromIntended("Mean E2E latency"), { samples: "from_intended" as const }),
  e2e_from_intended_median_ms: k(nullable(num()), "ms", fromIntended("Median E2E latency"), { samples: "from_intended" as const }),
  e2e_from_intended_p90_ms: k(nullable(num()), "ms", fromIntended("P90 E2E latency"), { samples: "from_intended" as const }),
  e2e_from_intended_p99_ms: k(nullable(num()), "ms", fromIntended("P99 E2E latency"), { samples: "from_intended" as const }),
  schedule_lag_mean_ms: lag("mean", { samples: "schedule_lag" as const }),
  schedule_lag_median_ms: lag("median", { samples: "schedule_lag" as const }),
  schedule_lag_p90_ms: lag("90th percentile", { samples: "schedule_lag" as const }),
  schedule_lag_p99_ms: lag("99th percentile", { samples: "schedule_lag" as const }),
  mean_prompt_len: k(nullable(num()), "tokens", "Mean prompt length of the round's turns (history included); null: no turn completed."),
  max_prompt_len: k(nullable(int()), "tokens", "Longest prompt of the round's turns; null: no turn completed."),

  // The prefix cache.
  page_size: k(int(), "tokens", "Tokens per cache page: cached tokens are expected in whole pages."),
  expected_cached_tokens: k(int(), "tokens", "Cached tokens each request should report: the shared prefix, page-aligned.", {
    roundDoc: "Σ over completed turns of the cached tokens each should report (its history but the last output token, paged).",
  }),
  observed_cached_tokens: k(nullable(int()), "tokens", "Σ of the cached tokens the round's turns reported; null when none did."),
  mean_cached_tokens: k(nullable(num()), "tokens", "Mean cached tokens the requests reported; null when none did."),
  min_cached_tokens: k(nullable(int()), "tokens", "Fewest cached tokens a request reported; null when none did."),
  max_cached_tokens: k(nullable(int()), "tokens", "Most cached tokens a request reported; null when none did."),
  cached_tokens_mismatched: k(nullable(int()), "requests", "Requests whose reported cached tokens differ from expected; null when none reported any.", {
    roundDoc: "Turns whose reported cached tokens differ from expected (approximate turns: fall below their exact part); null when none reported any.",
  }),
  cached_tokens_counts: k(array(pair(int(), int()), { maxItems: 10 }), null, "[cached_tokens, requests] pairs, most frequent first, at most 10."),
  expected_hit_ratio: k(num(), "ratio", "Share of prompt tokens that should come from the cache (0..1).", { roundShape: nullable(num()) }),
  observed_hit_ratio: k(nullable(num()), "ratio", "Share of prompt tokens the requests reported cached (0..1); null when none reported."),
  server_cache_hit_rate: k(nullable(num()), "ratio", "Hit rate from the server's Prometheus counters over the measured window; null without /metrics.", {
    roundDoc: "Hit rate from the server's Prometheus counters over the round (with --round-barrier only: rounds overlap without); null without /metrics.",
  }),
  approximate_turns: k(int(), "turns", "Turns whose history holds an answer re-tokenized from text (a backend without output ids)."),
  working_set: k(int(), "prefixes", "Distinct shared prefixes in rotation (--working-set): prompt i shares prefix i mod K.", {
    roundDoc: "Distinct system prompts in rotation (--working-set).",
    axis: true,
  }),
  working_set_tokens: k(int(), "tokens", "What the cache must hold for every request to hit: working_set x prefix_len.", {
    roundDoc: "What the cache must hold for every turn of the round to hit: the system prompts and every history.",
  }),
  cache_capacity_tokens: k(nullable(int()), "tokens", "The server's device cache capacity (/server_info max_total_num_tokens); null: unknown."),
  host_cache_capacity_tokens: k(nullable(int()), "tokens", "The server's host-tier capacity (HiCache: hicache_ratio x the device's); null: none or unknown."),
  working_set_fits: k(nullable(bool()), null, "working_set_tokens <= the device capacity; null when the capacity is unknown."),
  cache_shortfall_requests: k(nullable(int()), "requests", "Successful requests that reported fewer cached tokens than expected; null when none reported any."),
  eviction: k(nullable(bool()), null, "Some request's observed hit fell below expected; null when none reported cached tokens."),
  cached_tokens_by_tier: k(
    cachedTokensByTierShape,
    "tokens",
    "Cached prompt tokens per cache tier over the line's requests; null when the server reports no breakdown.",
  ),
  ttft_by_tier: k(ttftByTierShape, null, "TTFT of the requests each tier served (the deepest tier a prefix needed); null without the breakdown.", {
    samples: "ttft" as const,
  }),
  // A trace replay's own (replay lines only): every request's hit predicted from what the client saw (docs/guides/replay.md).
  block_size: k(int(), "tokens", "Tokens per hash id of the replayed trace (--block-size). Replay lines only."),
  time_scale: k(nullable(num()), null, "Factor on the trace's timestamps (--time-scale); null in a closed loop (--ignore-timestamps). Replay lines only."),
  infinite_hit_ratio: k(
    nullable(num()),
    "ratio",
    "Cached tokens an infinite cache would have served (the longest prefix shared with a request whose first token had arrived when this one was sent) / prompt tokens; null in a merged line. Replay lines only.",
  ),
  predicted_eviction_tokens: k(
    int(),
    "tokens",
    "Of those, the cached tokens the LRU model of the cache (cache_capacity_tokens, in pages) predicts eviction takes. Replay lines only.",
  ),
  observed_shortfall_tokens: k(int(), "tokens", "Cached tokens the server reported below the infinite cache's, summed over the requests. Replay lines only."),
  cache_short_requests: k(
    int(),
    "requests",
    "Requests that reported fewer cached tokens than their predicted lower bound (the model's, eviction included): unexplained shortfalls. Replay lines only.",
  ),
  cache_over_requests: k(
    int(),
    "requests",
    "Requests that reported more cached tokens than any earlier request could have given (the upper bound). Replay lines only.",
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
    { samples: "ttft" as const },
  ),
  // Several replicas (--base-url A,B,...): the routing and the hit-loss ledger (metrics/hit-ledger.ts).
  route: k(
    str(),
    null,
    "How each request was routed over the replicas: the client's --route (round-robin, random, least-in-flight, session, prefix, oracle), or router (a router in front, --replicas). Replica lines only.",
  ),
  replicas: k(nullable(replicasShape), null, "Per replica: its server, the requests it served and its part of the ledger; null in a merged line."),
  routing_imbalance: k(nullable(num()), "ratio", "Requests of the busiest replica over the mean per replica (1: even); null: none measured.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_requests: k(int(), "requests", "Requests in the ledger: answered, with cached tokens reported.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_unattributed_requests: k(int(), "requests", "Requests no replica is known for (behind a router whose response named none): left out of the ledger.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_available_tokens: k(
    int(),
    "tokens",
    "Sum of each request's page-aligned longest prefix shared with an earlier finished request (or warm) on any replica: the hits one shared infinite cache would give.",
    { samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_on_replica_tokens: k(int(), "tokens", "The same, counting only what the replica that served the request had served or been warmed with.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  ledger_modelled_tokens: k(
    int(),
    "tokens",
    "What each replica's LRU model at its capacity (its /server_info) holds of those; without a capacity, on_replica.",
    { samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  ledger_delivered_tokens: k(int(), "tokens", "The cached tokens the servers reported.", { samples: "ledger" as const, measuredOnlyWith: "replicas" as const }),
  loss_routing_tokens: k(int(), "tokens", "available - on_replica: hits lost to where requests were routed.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_eviction_tokens: k(int(), "tokens", "on_replica - modelled: hits the replicas' caches were too small to keep.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_engine_tokens: k(
    int(),
    "tokens",
    "modelled - delivered: hits the engines did not deliver though the model says they held them (negative: more than expected).",
    { samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  loss_routing_ratio: k(
    nullable(num()),
    "ratio",
    "loss_routing_tokens / ledger_available_tokens; null: nothing was available. Gate it: loss_routing_ratio<=0.05.",
    { samples: "ledger" as const, measuredOnlyWith: "replicas" as const },
  ),
  loss_eviction_ratio: k(nullable(num()), "ratio", "loss_eviction_tokens / ledger_available_tokens; null: nothing was available.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  loss_engine_ratio: k(nullable(num()), "ratio", "loss_engine_tokens / ledger_available_tokens; null: nothing was available.", {
    samples: "ledger" as const,
    measuredOnlyWith: "replicas" as const,
  }),
  // The cache-fidelity check (--check-fidelity): greedy answers after a cache hit against answers after a flush.
  fidelity_checked: k(
    int(),
    "samples",
    "Sampled prompts whose cold (after a proven flush) and warm (prefix proven cached) greedy answers were compared. --check-fidelity lines only.",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_identical: k(int(), "samples", "Of those, the ones whose warm answer was token for token the cold one.", {
    samples: "fidelity" as const,
    measuredOnlyWith: "check-fidelity" as const,
  }),
  fidelity_near_tie: k(
    int(),
    "samples",
    "The ones that first differed at a near tie: each chosen token in the other's top list, no more than --fidelity-tie-nats apart (a numerics change on the cached path).",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_diverged: k(
    int(),
    "samples",
    "The ones that differed in a way no near tie explains: suspect wrong KV. Gate it: fidelity_diverged==0; compare fails any increase.",
    { mustNotGrow: true, samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_unclassified: k(
    int(),
    "samples",
    "The ones that differed where the server gave no top log-probabilities to weigh the difference (fidelity_note says why).",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_unproven: k(
    int(),
    "samples",
    "Sampled prompts not compared: the cold or warm cache state was not proven, or a request failed (fidelity_note says why).",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_first_divergence: k(
    array(int()),
    "tokens",
    "The first differing output position (0-based) of every answer that differed, ascending: their distribution.",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_max_gap_nats: k(
    nullable(num()),
    "nats",
    "The largest log-probability gap between the two chosen tokens at a first difference; null: no difference was weighed.",
    { samples: "fidelity" as const, measuredOnlyWith: "check-fidelity" as const },
  ),
  fidelity_note: k(nullable(str()), null, "Why differences are unclassified or samples unproven; null when nothing needs saying.", {
    samples: "fidelity" as const,
    measuredOnlyWith: "check-fidelity" as const,
  }),
  cache_check: k(literal("ok", "mismatch", "unreported", "off"), null, "The verdict on the reported cached tokens against expected (--verify-cache)."),
  flushed: k(bool(), null, "Whether the cache was flushed before the line."),
  flush_attempts: k(int(), "attempts", "Flush requests it took."),
  flush_verified: k(nullable(bool()), null, "A probe after the flush found 0 cached tokens; null: not probed."),
  flush_probe_cached_tokens: k(
    nullable(int()),
    "tokens",
    "Cached tokens a probe of a sequence cached before the flush found after it (must be 0); null: not probed.",
  ),
  warm_verified: k(nullable(bool()), null, "The warm request reported the prefix cached afterwards; null: no warm or no report."),
  warm_cached_tokens: k(nullable(int()), "tokens", "Cached tokens the warm request found (0 after a flush proves it); null: no warm.", {
    roundDoc: "Cached tokens the system-prompt warm requests found after the flush (0 proves it); null: no warm.",
  }),

  // A capacity search (warmbench capacity): one line per pct after its probes.
  search: k(literal("rate", "concurrency"), null, "What the search varied: the open-loop request rate, or the closed loop's concurrency (--search)."),
  capacity_request_rate: k(
    nullable(num()),
    "req/s",
    "The highest request rate at which every gate held (0: the lowest failed); null: undecided or a concurrency search.",
    {
      better: "higher",
    },
  ),
  capacity_concurrency: k(
    nullable(int()),
    "requests",
    "The highest concurrency at which every gate held (0: the lowest failed); null: undecided or a rate search.",
    {
      better: "higher",
    },
  ),
  capacity_bracket: k(pair(nullable(num()), nullable(num())), null, "[highest passing load, lowest failing load] the probes found; null where none was found."),
  binding_gate: k(nullable(str()), null, "The first gate to fail at the bracket's failing end (with the value seen); null when none failed."),
  capacity_status: k(
    literal("found", "below_min", "at_max", "cache_unproven", "interrupted", "probe_limit"),
    null,
    "found; below_min: the lowest load failed (capacity 0); at_max: the highest passed (capacity >= it); cache_unproven: a cache check failed twice at a load; interrupted; probe_limit: the votes never settled.",
  ),
  capacity_reason: k(nullable(str()), null, "Why the capacity is 0, the maximum or unknown; null when found."),
  probes_counted: k(int(), "probes", "Probes that voted (a probe whose cache check failed does not)."),
  probes_sent: k(int(), "probes", "Probes sent, cache-failed ones included."),
  search_wall_s: k(num(), "s", "Wall-clock time of this pct's search, every flush, warm and probe included."),
  precision: k(num(), "ratio", "--precision: the bracket's relative width the search stopped at, (high - low) / low."),
  confirm: k(int(), "probes", "--confirm: agreeing probes a verdict near the boundary needed."),

  // The client's own health.
  client_loop_lag_p99_ms: k(num(), "ms", "How late a 10 ms probe timer fired on the JS thread, whatever the cause (p99)."),
  client_loop_lag_max_ms: k(num(), "ms", "How late that timer fired at most."),
  client_own_lag_p99_ms: k(num(), "ms", "The part of that lateness the JS thread's own work explains (p99): the saturation verdict reads this."),
  client_js_cpu_pct: k(num(), "% of one core", "CPU of the JS thread, which stamps every event."),
  client_http_cpu_pct: k(nullable(num()), "% of one core", "CPU of Bun's HTTP client thread; null where it cannot be read."),
  client_cpu_pct: k(num(), "% of one core", "CPU of the whole process, every thread (informative)."),
  client_saturated: k(bool(), null, "The client itself was the bottleneck: its numbers may be the client's, not the server's."),
  shards: k(shardsShape, null, "The shards that measured this line (how many, where, their clocks and health, which failed); null in one process."),

  // Models and histograms.
  ttft_fit: k(ttftFitShape, null, "This line's sufficient statistics of (uncached tokens, TTFT): merge them to refit the run's model.", {
    samples: "ttft" as const,
  }),
  ttft_model: k(ttftModelShape, null, "The TTFT model (TTFT = fixed + slope x uncached tokens) over the run's lines up to and including this one.", {
    samples: "ttft" as const,
  }),
  // The line over time (src/metrics/timeline.ts, steady-state.ts).
  steady_state: k(
    steadyStateShape,
    null,
    "The steady-state window: the longest interval in which requests in flight stay at or above 80 % of their peak (SGLang's steady-state rule; " +
      "dips under 5 ms, a slot handed from one request to the next, do not end it), and the main metrics over it, beside the whole line's; null: nothing sent.",
  ),
  timeline: k(
    timelineShape,
    null,
    "The line over time in fixed buckets from its first send (at most 120): requests sent, ended and in flight, output tokens, mean TTFT and ITL, " +
      "and the share cached, one string per figure: each bucket's value as its difference from the previous one, 1-3 base64url characters " +
      "(src/metrics/timeline-codec.ts has a 10-line Python decoder), because seven plain arrays take 3.4-4.2 KB a line, half of it separators, and these 1.1-1.3 KB; null: nothing sent.",
  ),
  hdr: k(sweepHdrShape, null, "HDR histograms of the line's latencies, to merge runs exactly.", { roundShape: roundHdrShape }),
  hdr_unit: k(literal("us"), null, 'The unit of the hdr histograms: "us" (microseconds).'),

  // What produced the line.
  warmbench_version: k(str(), null, "The warmbench build that wrote the line."),
  schema_version: k(label(), null, "Version of this line format: bumped when a key changes meaning (keys added keep it)."),
  started_at: k(str(), null, "When the run started (ISO 8601, UTC)."),
  model: k(str(), null, "--model: the tokenizer source (a Hugging Face id or a local path)."),
  tokenizer: k(str(), null, "The tokenizer actually loaded (its path or id)."),
  population_size: k(int(), "prompts", "Distinct prompts drawn before the line's were taken."),
  seed: k(str(), null, "The seed as a decimal string (Python ints have any size)."),
  base_url: k(str(), null, "The server's URL."),
  server_version: k(nullable(str()), null, "The server's version, as it reports it; null: not reported."),
  text_mode: k(literal("cumulative", "incremental"), null, "How the server streams text: the whole text so far in every event, or only the new part."),
  prompt_encoding: k(literal("token_ids", "text"), null, '"token_ids", or "text": the prompts went out as the text their ids decode to (chat).'),
  prompt_drift: k(promptDriftShape, null, "How text prompts came out after the server's tokenizer; null for token-id prompts."),
  merged: k(mergedShape, null, "Only in a line written by warmbench merge: the runs it merged, and which numbers come from histograms."),
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
