/**
 * Validated options of the measuring commands (RunOptions, MultiturnOptions) and the cross-flag checks that turn
 * raw flags into them. Defaults and enums live in config/defaults.ts, one-value parsers in config/flag-values.ts,
 * the flag declarations (help, commands) in config/flags; all re-exported here for the code that reads options.
 */
export * from "./config/defaults.ts";
export * from "./config/flag-values.ts";
import type { BackendName, EndpointFlag, FlushMode, ReadyQueuePolicy, VerifyCacheMode } from "./config/defaults.ts";

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


import { UsageError } from "./errors.ts";
import { endpointFor, ENGINES } from "./backends/index.ts";
import { parseCoordinatorFlag, parseShardFlag, parseWorkersFlag } from "./shard/placement.ts";
import { parseGates, type Gate } from "./gates/parse.ts";
import { arrivalCount } from "./workload/arrivals.ts";
import { splitPrompt } from "./workload/prompts.ts";
import { BACKENDS, ENDPOINTS, FLUSH_MODES, RUN_DEFAULTS, VERIFY_CACHE_MODES } from "./config/defaults.ts";
import { oneOf, parseBaseUrl, parseExtraBody, parseFraction, parseIntFlag, parseNumberFlag, parsePcts, parsePositive, parseRequestRates, parseSeed, parseWorkingSets, str, type RawFlags } from "./config/flag-values.ts";

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
    gates: parseGates(str(raw, "gate"), str(raw, "gates-file")),
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

/** Requests in flight at once: --max-concurrency, or every request of a line when it is 0 (the script's "unlimited"). */
export const inFlightLimit = (o: Pick<RunOptions, "maxConcurrency">, requests: number): number =>
  o.maxConcurrency === 0 ? Math.max(1, requests) : o.maxConcurrency;



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
