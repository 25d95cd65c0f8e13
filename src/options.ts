/**
 * Every default lives here, once. The CLI's flag table and the core read from these objects.
 * Names and defaults of the reference script's flags (bench_warm_cache.py) are kept exactly.
 */

export const RUN_DEFAULTS = {
  /**
   * Ask the server what it is (README "Engines"): against SGLang it sends exactly the requests --backend sglang
   * sends and writes the same results, so the script's default is kept for its users.
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

export type BackendName = (typeof BACKENDS)[number];
export type EndpointFlag = (typeof ENDPOINTS)[number];
export type VerifyCacheMode = (typeof VERIFY_CACHE_MODES)[number];
export type FlushMode = (typeof FLUSH_MODES)[number];

/** Validated options of `warmbench run`; nothing below run.ts sees raw flags. */
export interface RunOptions {
  backend: BackendName;
  /** Which generation API measured requests use; "auto": the engine's own. */
  endpoint: EndpointFlag;
  /** Server base URL without a trailing slash. */
  baseUrl: string;
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
}


// --- parsing: raw citty strings in, validated options out ---------------------------------

import { UsageError } from "./errors.ts";
import { endpointFor, ENGINES } from "./backends/index.ts";
import { parseCoordinatorFlag, parseShardFlag, parseWorkersFlag } from "./shard/placement.ts";
import { parseGates, type Gate } from "./gates/parse.ts";
import { plannedSweepAxes } from "./gates/axes.ts";
import { checkGatesMatchPlan } from "./gates/plan.ts";
import { arrivalCount } from "./workload/arrivals.ts";
import { splitPrompt } from "./workload/prompts.ts";

/** Raw flag values as citty hands them over: strings and booleans, keyed by kebab-case name. */
export type RawFlags = Record<string, string | boolean | undefined>;

const INT_RE = /^[+-]?\d+$/;

/** Parses a Python-style int flag (argparse `type=int`); throws a UsageError naming the flag. */
export function parseIntFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = value.trim().replaceAll("_", "");
  if (!INT_RE.test(text)) throw new UsageError(`--${flag}: expected an integer, got "${value}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag}: ${value} is too large`);
  if (n < min) throw new UsageError(`--${flag}: must be >= ${min}, got ${n}`);
  if (n > max) throw new UsageError(`--${flag}: must be <= ${max}, got ${n}`);
  return n;
}

/** Parses a non-negative decimal number of seconds (or ms), naming the flag on error. */
export function parseNumberFlag(flag: string, value: string, min: number): number {
  const text = value.trim();
  const n = text === "" ? NaN : Number(text);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, got "${value}"`);
  if (n < min) throw new UsageError(`--${flag}: must be >= ${min}, got ${n}`);
  return n;
}

/**
 * `--pcts 0,50,99`, split as the script does (`int(p.strip())` of every non-blank part). A repeated pct is run
 * again, as the script would; a list that leaves nothing to run, or a pct outside [0, 100] (the script would build
 * prompts of another length than --total-tokens), is explained and refused.
 */
export function parsePcts(value: string): number[] {
  const parts = value.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) {
    throw new UsageError(`--pcts "${value}": no percentage to sweep, so nothing would be measured (e.g. --pcts 0,50,90)`);
  }
  const pcts = parts.map((p) => parseIntFlag("pcts", p, Number.MIN_SAFE_INTEGER));
  for (const p of pcts) {
    if (p < 0 || p > 100) {
      throw new UsageError(
        `--pcts ${p}: a shared-prefix percentage must be in [0, 100]; the script would build prompts of another length than --total-tokens`,
      );
    }
  }
  return pcts;
}

/**
 * `--working-set 1,4,16`: how many distinct shared prefixes rotate through a pct's prompts, each size one point of
 * the sweep. 0 would leave the prompts nothing to share (and nothing to warm), so it is refused.
 */
export function parseWorkingSets(value: string): number[] {
  const parts = value.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) throw new UsageError(`--working-set "${value}": no working-set size given (e.g. --working-set 1,4,16)`);
  return parts.map((p) => {
    const k = parseIntFlag("working-set", p, Number.MIN_SAFE_INTEGER);
    if (k < 1) {
      throw new UsageError(`--working-set ${k}: a working set holds at least one shared prefix (1 = every prompt shares the same one)`);
    }
    return k;
  });
}

/** A Python float as float() reads it: a decimal number, or inf/infinity; null when it is neither. */
function parsePyFloat(text: string): number | null {
  const t = text.trim().toLowerCase().replaceAll("_", "");
  if (/^[+]?(inf|infinity)$/.test(t)) return Infinity;
  if (/^[+-]?(inf|infinity)$/.test(t)) return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}

/** `--request-rate 4` or a list to sweep, `1,2,4,inf`: each > 0 requests/s, or inf (the closed loop). */
export function parseRequestRates(value: string): number[] {
  const parts = value.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) throw new UsageError(`--request-rate "${value}": no rate given (e.g. --request-rate 8, or inf)`);
  return parts.map((p) => {
    const rate = parsePyFloat(p);
    if (rate === null) throw new UsageError(`--request-rate: expected a number of requests/s or inf, got "${p}"`);
    if (!(rate > 0)) throw new UsageError(`--request-rate ${p}: a rate must be > 0 requests/s (inf sends each request as soon as a slot is free)`);
    return rate;
  });
}

/** A positive number (or inf where `infinite` allows it), naming the flag on error. */
function parsePositive(flag: string, value: string, what: string, infinite: boolean): number {
  const n = parsePyFloat(value);
  if (n === null || (!infinite && !Number.isFinite(n))) throw new UsageError(`--${flag}: expected ${what}, got "${value}"`);
  if (!(n > 0)) throw new UsageError(`--${flag} ${value}: must be > 0`);
  return n;
}

/** `--seed`: a Python int of any size (random.Random uses its absolute value). */
export function parseSeed(value: string): bigint {
  const text = value.trim().replaceAll("_", "");
  if (!INT_RE.test(text)) throw new UsageError(`--seed: expected an integer, got "${value}"`);
  return BigInt(text);
}

/** `--extra-request-body`: a JSON object merged over the request payload, as the script does. */
export function parseExtraBody(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new UsageError(`--extra-request-body: not valid JSON (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UsageError(`--extra-request-body: expected a JSON object, got ${JSON.stringify(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

/** `--base-url`, or http://HOST:PORT; must be an http(s) URL. Returned without a trailing slash. */
export function parseBaseUrl(baseUrl: string | undefined, host: string, port: number): string {
  const text = baseUrl ?? `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
  const flag = baseUrl === undefined ? "host" : "base-url";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--${flag}: "${text}" is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--${flag}: "${text}" must start with http:// or https://`);
  }
  if (url.search || url.hash) throw new UsageError(`--${flag}: "${text}" must not have a query or fragment`);
  return text.replace(/\/+$/, "");
}

export const str = (raw: RawFlags, key: string): string | undefined => {
  const v = raw[key];
  if (v === undefined || v === false) return undefined;
  if (v === true) throw new UsageError(`--${key}: expects a value`);
  return v;
};

/** Turns raw `warmbench run` flags into RunOptions, or throws one UsageError naming the flag. */
export function parseRunOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): RunOptions {
  const d = RUN_DEFAULTS;
  const backend = oneOf(raw, "backend", BACKENDS, d.backend);
  const endpoint = oneOf(raw, "endpoint", ENDPOINTS, d.endpoint);
  if (backend !== "auto") {
    const resolved = endpointFor(ENGINES[backend], endpoint);
    if (!(ENDPOINTS as readonly string[]).includes(resolved)) throw new UsageError(`--endpoint ${endpoint}: ${resolved}`);
  }
  const model = str(raw, "model");
  if (!model || model.trim() === "") throw new UsageError("--model is required (a model id, or a tokenizer.json file or directory)");
  const port = parseIntFlag("port", str(raw, "port") ?? String(d.port), 1, 65535);
  const host = str(raw, "host") ?? d.host;
  const totalTokens = parseIntFlag("total-tokens", str(raw, "total-tokens") ?? String(d.totalTokens), Number.MIN_SAFE_INTEGER);
  if (totalTokens < 1) {
    throw new UsageError(`--total-tokens ${totalTokens}: every prompt would be empty, and a server cannot prefill or answer an empty prompt`);
  }
  const pcts = parsePcts(str(raw, "pcts") ?? d.pcts);
  for (const pct of pcts) {
    if (pct > 0 && splitPrompt(totalTokens, pct).prefixLen === 0) {
      throw new UsageError(
        `--total-tokens ${totalTokens} is too small for --pcts ${pct}: the shared prefix would be ${totalTokens}*${pct}//100 = 0 tokens, ` +
          `so nothing is shared or warmed (use --total-tokens >= ${Math.ceil(100 / pct)} or drop that pct)`,
      );
    }
  }
  const numPrompts = parseIntFlag("num-prompts", str(raw, "num-prompts") ?? String(d.numPrompts), Number.MIN_SAFE_INTEGER);
  if (numPrompts < 1) {
    throw new UsageError(`--num-prompts ${numPrompts}: no request would be measured (the script then stops with "All requests failed")`);
  }
  const outputLen = parseIntFlag("output-len", str(raw, "output-len") ?? String(d.outputLen), Number.MIN_SAFE_INTEGER);
  if (outputLen < 1) {
    throw new UsageError(`--output-len ${outputLen}: without an output token there is no time to first token to measure (use 1 or more)`);
  }
  const maxConcurrency = parseIntFlag("max-concurrency", str(raw, "max-concurrency") ?? String(d.maxConcurrency), Number.MIN_SAFE_INTEGER, 65535);
  if (maxConcurrency < 0) {
    throw new UsageError(`--max-concurrency ${maxConcurrency}: a concurrency limit cannot be negative (0 means unlimited, as in the script)`);
  }
  const workingSets = parseWorkingSets(str(raw, "working-set") ?? d.workingSet);
  if (endpoint === "chat" && workingSets.some((k) => k > 1)) {
    throw new UsageError("--working-set above 1 with --endpoint chat: text prompts are checked against one shared prefix; use --endpoint completions for cache-pressure studies");
  }
  const shared = parseSharedTail(raw, env);
  const load = parseLoad(raw, shared.seed);
  const gates = parseGates(str(raw, "gate"), str(raw, "gates-file"));
  checkGatesMatchPlan(gates, plannedSweepAxes(pcts, workingSets, load.requestRates));
  return {
    backend,
    endpoint,
    baseUrl: parseBaseUrl(str(raw, "base-url"), host, port),
    model,
    tokenizer: str(raw, "tokenizer") ?? model,
    revision: str(raw, "revision") ?? d.revision,
    numPrompts,
    totalTokens,
    outputLen,
    maxConcurrency,
    pcts,
    ...shared,
    ...load,
    workingSets,
    gates,
    workers: str(raw, "workers") === undefined ? null : parseWorkersFlag(str(raw, "workers")!),
    shard: str(raw, "shard") === undefined ? null : parseShardFlag(str(raw, "shard")!),
    coordinator: str(raw, "coordinator") === undefined ? null : parseCoordinatorFlag(str(raw, "coordinator")!),
  };
}

/** The flags every measuring command takes with the same meaning (after the workload's), in RunOptions' order. */
export type SharedTail = Pick<
  RunOptions,
  | "seed" | "disableIgnoreEos" | "outputFile" | "extraRequestBody" | "dumpPrompts" | "settleMs" | "flushDeadlineS"
  | "flushServerTimeoutS" | "requestTimeoutS" | "stallTimeoutS" | "pageSize" | "verbose" | "apiKey" | "servedModelName"
  | "requestDetails" | "verifyCache" | "cacheTolerance" | "flush" | "strict" | "quiet"
>;

export function parseSharedTail(raw: RawFlags, env: Record<string, string | undefined>): SharedTail {
  const d = RUN_DEFAULTS;
  const pageSizeRaw = str(raw, "page-size");
  return {
    seed: parseSeed(str(raw, "seed") ?? String(d.seed)),
    disableIgnoreEos: raw["disable-ignore-eos"] === true,
    outputFile: str(raw, "output-file") ?? null,
    extraRequestBody: parseExtraBody(str(raw, "extra-request-body") ?? "{}"),
    dumpPrompts: str(raw, "dump-prompts") ?? null,
    settleMs: parseNumberFlag("settle", str(raw, "settle") ?? String(d.settleMs / 1000), 0) * 1000,
    flushDeadlineS: parseNumberFlag("flush-deadline", str(raw, "flush-deadline") ?? String(d.flushDeadlineS), 0),
    flushServerTimeoutS: d.flushServerTimeoutS,
    requestTimeoutS: parseNumberFlag("request-timeout", str(raw, "request-timeout") ?? String(d.requestTimeoutS), 0.001),
    stallTimeoutS: parseNumberFlag("stall-timeout", str(raw, "stall-timeout") ?? String(d.stallTimeoutS), 0.001),
    pageSize: pageSizeRaw === undefined ? null : parseIntFlag("page-size", pageSizeRaw, 1),
    verbose: raw.verbose === true,
    apiKey: str(raw, "api-key") ?? env.SGLANG_API_KEY ?? env.OPENAI_API_KEY ?? null,
    servedModelName: str(raw, "served-model-name") ?? null,
    requestDetails: str(raw, "request-details") ?? null,
    verifyCache: oneOf(raw, "verify-cache", VERIFY_CACHE_MODES, d.verifyCache),
    cacheTolerance: parseFraction("cache-tolerance", str(raw, "cache-tolerance") ?? String(d.cacheTolerance)),
    flush: oneOf(raw, "flush", FLUSH_MODES, d.flush),
    strict: raw.strict === true,
    quiet: raw.quiet === true,
  };
}

/** --request-rate, --burstiness and --duration, checked against each other. */
function parseLoad(raw: RawFlags, seed: bigint): Pick<RunOptions, "requestRates" | "burstiness" | "durationS"> {
  const d = RUN_DEFAULTS;
  const requestRates = parseRequestRates(str(raw, "request-rate") ?? d.requestRate);
  const openLoop = requestRates.some((r) => Number.isFinite(r));
  const burstinessRaw = str(raw, "burstiness");
  const burstiness = parsePositive("burstiness", burstinessRaw ?? String(d.burstiness), "a gamma shape > 0 (1 = Poisson) or inf", true);
  if (burstinessRaw !== undefined && !openLoop) {
    throw new UsageError(`--burstiness ${burstinessRaw}: shapes the gaps between arrivals, so it needs a finite --request-rate`);
  }
  const durationRaw = str(raw, "duration");
  if (durationRaw === undefined) return { requestRates, burstiness, durationS: null };
  const durationS = parsePositive("duration", durationRaw, "a number of seconds", false);
  if (requestRates.some((r) => !Number.isFinite(r))) {
    throw new UsageError(`--duration ${durationRaw}: needs a finite --request-rate for every line (requests arrive at that rate until the time is up)`);
  }
  if (raw["num-prompts"] !== undefined) {
    throw new UsageError(`--duration ${durationRaw}: --num-prompts is the other way to stop a line; give one of them`);
  }
  const most = Math.max(...requestRates) * durationS;
  if (most > d.maxRequestsPerLine) {
    throw new UsageError(`--duration ${durationRaw}: rate x duration = ${Math.round(most)} requests per line, more than ${d.maxRequestsPerLine}`);
  }
  for (const ratePerS of requestRates) {
    if (arrivalCount({ ratePerS, burstiness, seed, count: null, durationS }) === 0) {
      throw new UsageError(`--duration ${durationRaw}: at ${ratePerS} req/s no request is due within ${durationS} s, so nothing would be measured`);
    }
  }
  return { requestRates, burstiness, durationS };
}

export function oneOf<T extends string>(raw: RawFlags, flag: string, choices: readonly T[], dflt: T): T {
  const v = str(raw, flag) ?? dflt;
  if (!(choices as readonly string[]).includes(v)) {
    throw new UsageError(`--${flag}: "${v}" is not supported (choose from: ${choices.join(", ")})`);
  }
  return v as T;
}

function parseFraction(flag: string, value: string): number {
  const n = parseNumberFlag(flag, value, 0);
  if (n > 1) throw new UsageError(`--${flag}: must be a fraction in [0, 1], got ${n}`);
  return n;
}


/** Defaults of `warmbench compare`. */
export const COMPARE_DEFAULTS = {
  /**
   * The limits without --max-regress: above the run-to-run noise measured by `bun run bench` (compare-noise: 20
   * pairs of runs against one mock never fail them), tight enough to catch a real regression of a release.
   */
  maxRegress: "mean_ttft_ms=10%,p99_ttft_ms=25%,mean_itl_ms=5%,output_throughput=5%",
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

/** A client's pause between its turns, seconds. */
export type ThinkTime =
  | { kind: "fixed"; s: number }
  | { kind: "exp"; meanS: number }
  | { kind: "uniform"; lowS: number; highS: number };

/** Validated options of `warmbench multiturn`: the sweep's shared flags, and the conversation's shape. */
export type MultiturnOptions = Omit<RunOptions, "numPrompts" | "totalTokens" | "pcts" | "workingSets" | "workers" | "shard" | "coordinator" | "gates" | "requestRates" | "burstiness" | "durationS"> & {
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
