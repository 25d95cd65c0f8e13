/** The shapes of the nested objects of a line, each field with what it means. */
import { array, bool, field, int, literal, nullable, num, object, openObject, str, type TypeOf } from "./shape.ts";

const engineShape = object({
  name: field(str(), '"sglang", "vllm", "llama.cpp", or "openai" (any other OpenAI-compatible server).'),
  source: field(literal("detected", "flag"), '"detected" (--backend auto) or "flag" (--backend NAME).'),
  evidence: field(str(), "What identified the engine: the server's answers, or the flag."),
  endpoint: field(str(), "Path the measured requests went to."),
  prompt_encoding: field(literal("token_ids", "text"), '"token_ids", or "text" (chat: the text the ids decode to).'),
  cache_slots: field(nullable(int()), "Prefix caches warmed and proven one by one (llama.cpp's slots); null: one shared cache."),
  max_running: field(nullable(int()), "Requests the server runs at once; null: not known."),
  flush_gap: field(nullable(str()), "Why the flush cannot make the server cold (e.g. llama.cpp's host-RAM cache); null: none found."),
});

export const runInfoShape = object({
  warmbench_version: field(str(), "The warmbench build that ran."),
  started_at: field(str(), "When the run started (ISO 8601, UTC)."),
  options: field(openObject(), 'Every option of the run, snake_case; the API key only as "(set)" or null.'),
  served_model: field(nullable(str()), "The model name sent to the server (OpenAI backends); null for SGLang native."),
  page_size: field(int(), "Tokens per cache page (cached tokens are counted in whole pages)."),
  page_size_source: field(
    literal("flag", "server", "backend default", "passport"),
    "Where page_size came from (passport: --passport, where the server states none).",
  ),
  server_info_source: field(nullable(str()), "The server endpoint that described it (/server_info, /props...), or null."),
  server_version: field(nullable(str()), "The server's version, as it reports it; null: not reported."),
  server_info: field(nullable(openObject()), "The server's own description, secrets redacted; null: none."),
  engine: field(engineShape, "The engine behind the URL, how it was settled, and what the run knows of its cache."),
});
export type RunInfo = TypeOf<typeof runInfoShape>;

export const gateResultShape = object({
  expr: field(str(), "The gate as given (--gate or --gates-file)."),
  value: field(nullable(num()), "The metric's value in this line; null when it could not be measured (the gate then fails)."),
  pass: field(bool(), "Whether the value is within the gate (a gate passes only on evidence)."),
  evidence: field(
    array(str()),
    'Why the gate failed whatever its value: the evidence the line lacks (src/metrics/evidence-check.ts), e.g. "no_samples: p99_itl_ms has no ITL sample". Absent when the evidence holds.',
    true,
  ),
  repeats: field(int(), "With --repeat: the repeats the mean (value) is over.", true),
  ci95_low: field(num(), "With --repeat: the 95 % t interval of the mean, low end (NaN with one repeat).", true),
  ci95_high: field(num(), "With --repeat: the 95 % t interval of the mean, high end (NaN with one repeat).", true),
});
export type GateResult = TypeOf<typeof gateResultShape>;

export const errorEntryShape = object({
  kind: field(str(), "The kind of failure (http, timeout, stream, ...)."),
  message: field(str(), "The failure's message."),
  count: field(int(), "Failures with this kind and message."),
});
export type ErrorEntry = TypeOf<typeof errorEntryShape>;

export const workloadShape = object({
  backend: field(str(), "The backend the prompts were encoded for."),
  tokenizer_sha256: field(str(), "SHA-256 of the tokenizer.json bytes (as sha256sum prints it)."),
  vocab_size: field(int(), "Largest token id + 1."),
  total_tokens: field(int(), "Prompt length, tokens."),
  output_len: field(int(), "Tokens asked of every request."),
  ignore_eos: field(bool(), "Whether requests asked the server to ignore EOS (off with --disable-ignore-eos)."),
  num_prompts: field(int(), "Measured prompts of the line."),
  max_concurrency: field(int(), "Requests in flight at most."),
  seed: field(str(), "The seed as a decimal string (Python ints have any size)."),
  shared_prefix_pct: field(num(), "Share of the prompt that is the shared prefix, %."),
  prompt_ids_hash: field(str(), "wyhash (64-bit, hex) of the prefix ids then every suffix's ids, as u32 little-endian."),
});
export type WorkloadFingerprint = TypeOf<typeof workloadShape>;

const tierTokens = object({
  device: field(int(), "Cached tokens served from the device (GPU) tier."),
  host: field(int(), "Cached tokens served from the host (CPU RAM) tier."),
  storage: field(int(), "Cached tokens served from the storage (L3) tier."),
});
export const cachedTokensByTierShape = nullable(tierTokens);
export type CachedTokensByTier = TypeOf<typeof tierTokens>;

const tierTtft = nullable(
  object({
    requests: field(int(), "Requests whose prefix this tier served."),
    mean_ttft_ms: field(num(), "Their mean TTFT, ms."),
    median_ttft_ms: field(num(), "Their median TTFT, ms."),
    p99_ttft_ms: field(num(), "Their 99th-percentile TTFT, ms."),
    mean_cached_tokens: field(num(), "Their mean cached tokens."),
  }),
);
const tierTtftDoc = (tier: string) => `TTFT of the requests the ${tier} served (the slowest tier the prefix needed); null: none.`;
export const ttftByTierShape = nullable(
  object({
    device: field(tierTtft, tierTtftDoc("device tier")),
    host: field(tierTtft, tierTtftDoc("host tier")),
    storage: field(tierTtft, tierTtftDoc("storage tier")),
    none: field(tierTtft, "TTFT of the requests of which nothing was cached; null: none."),
  }),
);

/** One replica's part of a line (several replicas, --base-url A,B,...). */
export const replicasShape = array(
  object({
    url: field(str(), "The replica's base URL (credentials never written)."),
    server_version: field(nullable(str()), "Its version, from its /server_info (or the engine's info endpoint)."),
    cache_capacity_tokens: field(nullable(int()), "Its cache capacity in tokens, from its /server_info; null: unknown (no eviction modelled)."),
    requests: field(int(), "Measured requests it served."),
    ledger_requests: field(int(), "Of them, in the ledger (answered, cached tokens reported)."),
    available_tokens: field(int(), "The ledger's available hits of its requests (an infinite cache shared by every replica)."),
    on_replica_tokens: field(int(), "Of those, what it had served or been warmed with (an infinite cache of its own)."),
    modelled_tokens: field(int(), "What its LRU model at its capacity holds of those."),
    delivered_tokens: field(int(), "The cached tokens it reported."),
    mean_ttft_ms: field(nullable(num()), "Mean TTFT of its ledger requests, ms; null: none."),
  }),
);

export const shardsShape = nullable(
  object({
    count: field(int(), "Processes that measured the line."),
    launcher: field(literal("local", "slurm", "flag"), "How they were started: --workers (local), Slurm, or --shard I/N (flag)."),
    ranks: field(
      array(
        object({
          rank: field(int(), "The shard's rank (0: the coordinator)."),
          host: field(str(), "The host it ran on."),
          pid: field(int(), "Its process id."),
          sent: field(int(), "Requests it sent."),
          failed: field(int(), "Of them, failed."),
          clock_offset_ms: field(num(), "Its clock's measured offset from the coordinator's, ms."),
          clock_rtt_ms: field(num(), "Round trip of the ping that measured the offset, ms."),
          loop_lag_p99_ms: field(num(), "Its event-loop lag p99, ms."),
          own_lag_p99_ms: field(num(), "The part of that lag its own work explains (p99), ms."),
          js_cpu_pct: field(num(), "CPU of its JS thread, % of one core."),
          saturated: field(bool(), "Whether its self-check found it saturated."),
        }),
      ),
      "One row per shard.",
    ),
    failed: field(array(str()), "One line per shard that disconnected, hung or failed during the line."),
  }),
);
export type ShardsReport = NonNullable<TypeOf<typeof shardsShape>>;
export type ShardRow = ShardsReport["ranks"][number];

export const ttftFitShape = nullable(
  object({
    n: field(int(), "Requests in the moments."),
    mean_uncached_tokens: field(num(), "Mean uncached prompt tokens."),
    mean_ttft_ms: field(num(), "Mean TTFT, ms."),
    m2_uncached_tokens: field(num(), "Σ (x − mean_x)², tokens²."),
    m2_ttft_ms: field(num(), "Σ (y − mean_y)², ms²."),
    c_uncached_ttft: field(num(), "Σ (x − mean_x)(y − mean_y), tokens·ms."),
  }),
);

export const ttftModelShape = nullable(
  object({
    n: field(int(), "Requests in the fit."),
    fixed_ms: field(num(), "Fixed overhead (the intercept), ms."),
    prefill_us_per_token: field(num(), "Prefill cost per uncached prompt token (the slope), µs."),
    saved_us_per_cached_token: field(num(), "TTFT saved per cached prompt token, µs (equal to the slope under this model)."),
    r2: field(nullable(num()), "Coefficient of determination, in [0, 1]; null when the TTFTs do not vary."),
  }),
);

const hdrDoc = (what: string) => `HDR histogram of ${what}, µs (HdrHistogram V2, compressed, base64).`;
const hdrFields = {
  ttft_us: field(str(), hdrDoc("TTFT")),
  tpot_us: field(str(), hdrDoc("TPOT")),
  itl_us: field(str(), hdrDoc("the inter-token gaps")),
  e2e_latency_us: field(str(), hdrDoc("E2E latency")),
};
/** A round line's histograms: the four of the script's latencies. */
export const roundHdrShape = object(hdrFields);
/** A sweep line's: the same and the three from the intended send time. */
export const sweepHdrShape = object({
  ...hdrFields,
  ttft_from_intended_us: field(str(), hdrDoc("TTFT from the intended send time")),
  e2e_from_intended_us: field(str(), hdrDoc("E2E latency from the intended send time")),
  schedule_lag_us: field(str(), hdrDoc("the schedule lag (actual - intended send)")),
});

export const promptDriftShape = nullable(
  object({
    prefix_ids: field(int(), "Ids the shared prefix was drawn as."),
    prefix_tokens: field(int(), "Tokens its text re-tokenizes to."),
    prefix_drift_at: field(int(), "First position where those tokens differ from the ids; -1: none."),
    stable_tokens: field(int(), "Leading prefix tokens no continuation moved: the least a prompt may report cached (+ the template head)."),
    min_shared_tokens: field(int(), "Fewest leading tokens a prompt shares with the re-tokenized prefix."),
    max_shared_tokens: field(int(), "Most leading tokens a prompt shares with the re-tokenized prefix."),
    template_head_tokens: field(int(), "Chat template tokens before the content that every prompt shares (learned after the flush)."),
  }),
);
export type PromptDrift = NonNullable<TypeOf<typeof promptDriftShape>>;

export const mergedShape = object({
  files: field(array(str()), "The files merged."),
  run_ids: field(array(nullable(str())), "Their run ids (null: a file without one)."),
  histogram_derived: field(array(str()), "The keys computed from the merged HDR histograms rather than exactly (3 significant digits)."),
  request_details: field(
    array(str()),
    "The --request-details files the TTFT, TPOT, ITL and E2E statistics were computed from exactly (numpy's definition, as in a line of one run); absent when they came from the histograms.",
    true,
  ),
});

/** A line's evidence (src/metrics/evidence.ts builds it, src/metrics/evidence-check.ts judges it for every verdict). */
export const evidenceShape = object({
  samples: field(
    object({
      ttft: field(int(), "Successful requests, each one TTFT sample (also the E2E and throughput samples)."),
      tpot: field(int(), "Successful requests with more than one output token: the TPOT samples."),
      itl: field(int(), "Inter-token gaps over the successful requests: the ITL samples."),
      e2e: field(int(), "E2E latency samples (successful requests)."),
      from_intended: field(int(), "Samples of the latencies from the intended send time (successful requests)."),
      schedule_lag: field(int(), "Schedule-lag samples (every sent request)."),
      fidelity: field(int(), "Answers compared by the cache-fidelity check (--check-fidelity lines only): the samples of every fidelity_* key.", true),
      ledger: field(int(), "Requests in the hit-loss ledger (several replicas only): the samples of every ledger_* and loss_* key.", true),
      telemetry: field(
        int(),
        "Scrapes of the servers' /metrics that answered during the point (--scrape-interval): the samples of every server_* telemetry key.",
        true,
      ),
    }),
    "How many samples each metric family was computed from: a family with 0 samples has null metrics.",
  ),
  requests: field(
    object({
      planned: field(int(), "Requests the line was to send."),
      sent: field(int(), "Requests sent (completed + failed)."),
      finished: field(int(), "Requests that completed successfully."),
    }),
    "Planned, sent and finished requests.",
  ),
  complete: field(bool(), "Every planned request was sent and the line was not interrupted."),
  load: field(
    object({
      offered_request_rate: field(nullable(num()), "The request rate the line offered (its axis); null in a closed loop."),
      achieved_request_rate: field(
        nullable(num()),
        "Requests carried per second: the send rate times the share that finished successfully; null when all went at once or in a closed loop.",
      ),
      offered_concurrency: field(nullable(int()), "Requests the closed loop was to keep in flight (min of max_concurrency and planned); null in an open loop."),
      achieved_concurrency: field(nullable(int()), "Most requests in flight at once; null when nothing was sent."),
      sustained: field(
        nullable(bool()),
        "The offered load was carried: open loop, the sends kept to the schedule (their span within 5 % or 10 ms of the intended span); closed loop, the peak in flight reached the offered concurrency. null: not judged (a round, or nothing sent).",
      ),
    }),
    "Offered and achieved load.",
  ),
  cache: field(
    object({
      flush_proven: field(nullable(bool()), "A probe after the flush found nothing cached; null: not probed."),
      warm_proven: field(nullable(bool()), "The warm request's cached tokens proved the prefix cached; null: no warm or no report."),
      per_request: field(literal("ok", "mismatch", "unreported", "off"), "The per-request cached-token check (cache_check)."),
    }),
    "The cache proof.",
  ),
  client_healthy: field(bool(), "The client was not saturated (client_saturated false)."),
  run_ids: field(array(str()), "The runs the line measured: one, or every input run of a merged line."),
});
export type LineEvidence = TypeOf<typeof evidenceShape>;
