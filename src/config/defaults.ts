/**
 * Every default lives here, once, with the flags' fixed lists of values: the flag declarations (src/config/flags/)
 * and the commands read these objects. Names and defaults of the reference script's flags (bench_warm_cache.py) are
 * kept exactly.
 */
export const RUN_DEFAULTS = {
  /**
   * Ask the server what it is (docs/guides/sweep.md "Engines"): against SGLang it sends exactly the requests
   * --backend sglang sends and writes the same results, so the script's default is kept for its users.
   */
  backend: "auto",
  /** The engine's own generation API: SGLang's /generate, /v1/completions elsewhere. */
  endpoint: "auto",
  baseUrl: null as string | null,
  host: "127.0.0.1",
  port: 30000,
  numPrompts: 64,
  totalTokens: 70000,
  outputLen: 200,
  maxConcurrency: 4,
  pcts: "0,10,20,30,40,50,60,70,80,90,92,95,97,99",
  seed: 42,
  /** Pause after each flush, as the script's time.sleep(1). */
  settleMs: 1000,
  /** How long flush retries (on 400: busy) may go on before the run fails. */
  flushDeadlineS: 60,
  /** Server-side wait passed as /flush_cache?timeout= (SGLang >= 0.5.10; older servers ignore it). */
  flushServerTimeoutS: 10,
  /** Whole-request limit; the script used 20 h. */
  requestTimeoutS: 3600,
  /** No byte at all for this long fails the request as stalled. */
  stallTimeoutS: 300,
  /** The longest SSE line read (client/sse.ts MAX_SSE_LINE_BYTES). */
  maxSseLineBytes: 16 * 1024 * 1024,
  /** The largest control answer read (backends/http.ts MAX_CONTROL_BODY_BYTES). */
  maxControlBodyBytes: 64 * 1024 * 1024,
  /** HF revision used when a repo id must be downloaded. */
  revision: "main",
  /** What to do when the server's cached tokens disagree with the expected prefix. */
  verifyCache: "warn",
  /** Fraction of measured requests per pct whose cached tokens may disagree before strict verification fails. */
  cacheTolerance: 0,
  /** How to flush the cache: the backend's own way, or not at all. */
  flush: "auto",
  /** Distinct shared prefixes in rotation per pct (cache pressure); a list sweeps them. 1 = the script's sweep. */
  workingSet: "1",
  /** Requests per second; "inf" sends the next request as soon as a slot is free (the script's closed loop). */
  requestRate: "inf",
  /** Shape of the gamma-distributed gaps between arrivals: 1 is Poisson, larger is more regular. */
  burstiness: 1,
  /** Prompts drawn and serialized ahead of their send, at most: enough to ride out a burst of arrivals. */
  promptLookahead: 4096,
  /** Serialized prompt bytes not yet handed to the socket, at most: what bounds memory with long prompts. */
  promptBufferBytes: 64 * 2 ** 20,
  /** Open-loop runs with --duration: at most this many requests per line (rate x duration). */
  maxRequestsPerLine: 10_000_000,
} as const;

/** Backends by flag value: auto detects the engine; openai is any OpenAI-compatible server. */
export const BACKENDS = ["auto", "sglang", "vllm", "llamacpp", "openai"] as const;
export const ENDPOINTS = ["auto", "generate", "completions", "chat"] as const;
export const VERIFY_CACHE_MODES = ["off", "warn", "strict"] as const;
export const FLUSH_MODES = ["auto", "none"] as const;

export type VerifyCacheMode = (typeof VERIFY_CACHE_MODES)[number];

/** Defaults of `warmbench compare`. */
export const COMPARE_DEFAULTS = {
  /**
   * The limits without --max-regress: above the run-to-run noise measured by `bun run bench` (compare-repeats: 20
   * pairs of runs against one mock never fail them), tight enough to catch a real regression of a release. The TTFT
   * model's terms and TPOT too: a per-token prefill or decode regression that mean TTFT dilutes still fails.
   */
  maxRegress:
    "mean_ttft_ms=10%,p99_ttft_ms=25%,mean_itl_ms=5%,mean_tpot_ms=5%,ttft_model_fixed_ms=10%,ttft_model_prefill_us_per_token=10%,output_throughput=5%",
} as const;

/** The demo's sweep: short enough for a laptop, long enough to show the cache at work. */
export const DEMO_DEFAULTS = {
  numPrompts: 16,
  totalTokens: 4000,
  outputLen: 32,
  maxConcurrency: 4,
  pcts: "0,50,90",
  settleS: 0.1,
  /** The mock's latency model in the demo: prefill dominates, as on a GPU with long prompts. */
  mock: { ttftBaseMs: 5, prefillUsPerToken: 20, itlMs: 4, pageSize: 16, serialPrefill: false },
} as const;

// --- warmbench multiturn -------------------------------------------------------------------

/**
 * `warmbench multiturn` defaults: SGLang's benchmark/hicache/bench_multiturn.py where a flag means the same
 * (num-clients 256, num-rounds 5, request-length 512, output-length 64, max-parallel 128, ready-queue-policy random),
 * the sweep's for everything else.
 */
export const MULTITURN_DEFAULTS = {
  numClients: 256,
  numRounds: 5,
  /** New user tokens per turn (bench_multiturn's sub-question-input-length, which defaults to request-length). */
  turnTokens: 512,
  /** Prompt tokens common to every conversation of one working-set slot (a system prompt), warmed before round 0. */
  sharedSystemTokens: 0,
  outputLen: 64,
  /** bench_multiturn's --max-parallel. */
  maxConcurrency: 128,
  /** Seconds a client waits between its turns: a number, exp:MEAN or uniform:LOW:HIGH. */
  thinkTime: "0",
  readyQueuePolicy: "random",
  /** Distinct system prompts (clients use slot c mod K). */
  workingSet: 1,
} as const;

/**
 * Which ready client sends next when a slot frees: `fifo` (the one ready longest), `random` (seeded), or
 * `round-robin` (client ids in turn, so the reuse distance between two turns of one client is the other clients).
 */
export const READY_QUEUE_POLICIES = ["fifo", "random", "round-robin"] as const;
export type ReadyQueuePolicy = (typeof READY_QUEUE_POLICIES)[number];
