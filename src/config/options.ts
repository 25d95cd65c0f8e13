/**
 * Every default lives here, once, with the option types and enums: the CLI's flag table and parsing (src/cli/) and
 * the core read from these objects. Names and defaults of the reference script's flags (bench_warm_cache.py) are
 * kept exactly.
 */
import type { RoutePolicy } from "./route-policies.ts";
import type { Gate } from "../schema/gate.ts";
import type { CacheBehaviour } from "./cache-behaviour.ts";
import type { ThinkTime } from "./flag-values.ts";
import type { DeclaredFields } from "./flags/declared-fields.ts";
import type { TelemetryDecl } from "./flags/telemetry.ts";

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

type BackendFlag = (typeof BACKENDS)[number];
type EndpointFlag = (typeof ENDPOINTS)[number];
export type VerifyCacheMode = (typeof VERIFY_CACHE_MODES)[number];
type FlushMode = (typeof FLUSH_MODES)[number];

/** The fields of run's parser-first declarations (the telemetry flags): each flag's field and type are its declaration's. */
export type DeclaredRunFields = DeclaredFields<TelemetryDecl, "run">;

/**
 * Validated options of `warmbench run`; nothing below run.ts sees raw flags. A flag declared parser-first
 * (`bindField`, as config/flags/telemetry.ts) brings its field here by itself; the others name theirs below.
 */
export interface RunOptions extends DeclaredRunFields {
  backend: BackendFlag;
  /** Which generation API measured requests use; "auto": the engine's own. */
  endpoint: EndpointFlag;
  /** Server base URL without a trailing slash. */
  baseUrl: string;
  /** `user:password` from --base-url's userinfo, sent as Basic authorization and never shown (baseUrl holds none); null: none. */
  urlCredentials: string | null;
  model: string;
  /** Tokenizer spec: a tokenizer.json path, a directory holding one, or a Hugging Face repo id. */
  tokenizer: string;
  revision: string;
  numPrompts: number;
  totalTokens: number;
  outputLen: number;
  /** Requests in flight at once; 0 = unlimited (every prompt at once), as the script's `max_concurrency` of 0. */
  maxConcurrency: number;
  pcts: number[];
  /** Python int seed, any size; random.Random(seed) uses abs(seed). */
  seed: bigint;
  disableIgnoreEos: boolean;
  outputFile: string | null;
  extraRequestBody: Record<string, unknown>;
  dumpPrompts: string | null;
  settleMs: number;
  flushDeadlineS: number;
  flushServerTimeoutS: number;
  requestTimeoutS: number;
  stallTimeoutS: number;
  /** --keep-going: a failed output file does not stop the points still to measure. */
  keepGoing?: boolean;
  /** --sse-line-max-mib, bytes. */
  maxSseLineBytes: number;
  /** --control-body-max-mib, bytes. */
  maxControlBodyBytes: number;
  /** Server KV page size for the expected cached tokens; null = read /server_info (else 1). */
  pageSize: number | null;
  verbose: boolean;
  /** Bearer token for the target server only (never the hub); from --api-key or SGLANG_API_KEY/OPENAI_API_KEY. */
  apiKey: string | null;
  /** OpenAI backend: the model name to send; null = ask /v1/models. */
  servedModelName: string | null;
  /** Per-request JSONL (timestamps, cached tokens) for accuracy studies; request ids go out as x-request-id. */
  requestDetails: string | null;
  verifyCache: VerifyCacheMode;
  cacheTolerance: number;
  flush: FlushMode;
  /** Exit non-zero when the client itself was saturated during a pct. */
  strict: boolean;
  /** --workers: processes on this machine (this one included), or "auto"; null: one process. */
  workers: number | "auto" | null;
  /** --shard: this process's rank of a launcher-started run ("I/N"), or "auto" (Slurm); null: not sharded. */
  shard: { rank: number; size: number } | "auto" | null;
  /** --coordinator HOST:PORT where shard 0 listens; null: derived (Slurm) or not needed. */
  coordinator: { hostname: string; port: number } | null;
  /** Working-set sizes to run at every pct (K distinct shared prefixes in rotation); [1] is the script's sweep. */
  workingSets: number[];
  /** --gate and --gates-file, in that order; checked as each pct ends (exit code 6 when one fails). */
  gates: Gate[];
  /** No progress display on stderr. */
  quiet: boolean;
  /** Request rates to sweep within each pct, requests/s; Infinity = closed loop (the next request when a slot is free). */
  requestRates: number[];
  /** Gamma shape of the gaps between arrivals (mean 1/rate): 1 = Poisson, Infinity = evenly spaced. */
  burstiness: number;
  /** Open loop: requests arrive at the rate for this long (instead of --num-prompts of them); null = --num-prompts. */
  durationS: number | null;
  /**
   * --repeat N: each line measured N times (lines carry `repeat` 0..N-1). Absent without the flag, so neither the
   * lines nor the run's options echo change then.
   */
  repeat?: number;
  /** --repeat-until-cv X: a line's repeats stop once the CV of its gated metrics is below X (2 at least, --repeat at most). */
  repeatUntilCv?: number;
  /**
   * Several replicas (--base-url A,B,...): every one flushed, proven and warmed; each measured request routed by
   * `route` (the client routes). Absent with one URL; `baseUrl` is then the first.
   */
  replicas?: {
    urls: string[];
    /** The client's policy, or "router": a router at `via.url` routes (--replicas), the replicas are its control plane. */
    route: RoutePolicy | "router";
    via?: { url: string; keyHeader: string | null; servedHeader: string };
  };
  /** --server-cache: how the server caches, as far as it is stated (absent: nothing stated). */
  serverCache?: CacheBehaviour;
  /** --warm-replicas: each prefix warmed where the route first sends it, or on every replica (absent: route). */
  warmReplicas?: "route" | "all";
  /**
   * --passport FILE: the cache geometry `warmbench passport` measured, used where the server states none (its page
   * size, its capacity) and where --server-cache does not say (whether answers are cached, when a prompt is).
   * Absent without the flag.
   */
  passport?: {
    file: string;
    pageSize: number | null;
    capacityTokens: number | null;
    /** Whether the server caches an answer with its prompt, as measured; null: not measured. */
    answersCached: boolean | null;
    /** When a prompt's pages enter the cache, as measured; null: not measured. */
    insertAt: "prefill" | "finish" | null;
    engine: string | null;
    serverVersion: string | null;
    baseUrl: string | null;
  };
  /** --working-set auto: the sizes are chosen around the cache's capacity once it is known (before anything is measured). */
  workingSetAuto?: true;
  /** --check-fidelity: after each line, compare `sample` greedy answers warm against cold. Absent without the flag. */
  fidelity?: { sample: number; tieNats: number };
}

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

/** Requests in flight at once: --max-concurrency, or every request of a line when it is 0 (the script's "unlimited"). */
export const inFlightLimit = (o: Pick<RunOptions, "maxConcurrency">, requests: number): number =>
  o.maxConcurrency === 0 ? Math.max(1, requests) : o.maxConcurrency;

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

/** Validated options of `warmbench multiturn`: the sweep's shared flags, and the conversation's shape. */
export type MultiturnOptions = Omit<
  RunOptions,
  "numPrompts" | "totalTokens" | "pcts" | "workingSets" | "requestRates" | "burstiness" | "durationS" | "repeat" | "repeatUntilCv"
> & {
  numClients: number;
  numRounds: number;
  turnTokens: number;
  /** New user tokens of round 0 (bench_multiturn's request-length); defaults to turnTokens. */
  firstTurnTokens: number;
  sharedSystemTokens: number;
  roundBarrier: boolean;
  thinkTime: ThinkTime;
  readyQueuePolicy: ReadyQueuePolicy;
  workingSet: number;
};

/** Requests in flight at once: --max-concurrency, or every client when it is 0. */
export const multiturnInFlight = (o: Pick<MultiturnOptions, "maxConcurrency" | "numClients">): number =>
  o.maxConcurrency === 0 ? o.numClients : Math.min(o.maxConcurrency, o.numClients);

/** The Authorization of every request to the server: --api-key as a bearer token, else --base-url's userinfo as Basic. */
export function controlHeaders(o: Pick<RunOptions, "apiKey" | "urlCredentials">): Record<string, string> {
  if (o.apiKey) return { authorization: `Bearer ${o.apiKey}` };
  if (o.urlCredentials) return { authorization: `Basic ${Buffer.from(o.urlCredentials, "utf8").toString("base64")}` };
  return {};
}
