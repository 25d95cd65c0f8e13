/**
 * Flags of the measuring commands (`run`, `demo`, `multiturn`, `replay`): the reference script's flags with its names
 * and defaults, then ours; `capacity` and `passport` take some of them, named in each declaration's commands. A flag a
 * command takes with another meaning, help or default says so in that command's override.
 */
import { ROUTE_POLICIES } from "../route-policies.ts";
import { CAPACITY_DEFAULTS as c } from "../capacity-defaults.ts";
import { FIDELITY_DEFAULTS } from "../fidelity-defaults.ts";
import {
  BACKENDS,
  DEMO_DEFAULTS as dd,
  ENDPOINTS,
  FLUSH_MODES,
  MULTITURN_DEFAULTS as md,
  READY_QUEUE_POLICIES,
  RUN_DEFAULTS as d,
  VERIFY_CACHE_MODES,
} from "../defaults.ts";
import type { FlagDecl, RefusedFlag } from "./types.ts";
import { parseCacheBehaviour } from "../cache-behaviour.ts";
import { bindField, chosen } from "./binding.ts";
import {
  parseExtraBody,
  parseFraction,
  parseIntAtLeast,
  parseIntFlag,
  parseNumberFlag,
  parsePcts,
  parsePositive,
  parseRequestRates,
  parseSeed,
  parseThinkTime,
  str,
  type RawFlags,
} from "../flag-values.ts";

type Commands = FlagDecl["commands"];
type More = Partial<Omit<FlagDecl, "name" | "type" | "help" | "commands">>;
// Generic, so that each declaration keeps its commands, defaults and bindings as written: the options the flags fill
// are typed from them (config/flags/bound.ts).
const text = <const C extends Commands, const M extends More = Record<never, never>>(name: string, help: string, commands: C, more: M = {} as M) => ({
  name,
  type: "string" as const,
  help,
  commands,
  ...more,
});
const bool = <const C extends Commands, const M extends More = Record<never, never>>(name: string, help: string, commands: C, more: M = {} as M) => ({
  name,
  type: "boolean" as const,
  help,
  commands,
  ...more,
});
/** A switch's value: true when given. */
const switchOf =
  (name: string) =>
  (raw: RawFlags): boolean =>
    raw[name] === true;
/** A flag's text as given (a path, a name), null when not given. */
const textOf =
  (name: string) =>
  (raw: RawFlags): string | null =>
    str(raw, name) ?? null;
/** `decl` with its binding's field `field`, marked as shaping the workload. */
type Shaped<D, F extends string> = Omit<D, "bind"> & {
  bind: (D extends { bind: infer B } ? Omit<B, "field"> : Record<never, never>) & { field: F; shapesWorkload: true };
};
/** A flag whose field shapes the workload, parsed with the options it is checked against (its command's parser). */
function shaped<D extends FlagDecl, const F extends string>(decl: D, field: F): Shaped<D, F>;
function shaped(decl: FlagDecl, field: string): unknown {
  return { ...decl, bind: { ...decl.bind, field, shapesWorkload: true } };
}

const RUN_MT = { run: true, multiturn: true } as const;
/** Bytes in a mebibyte: the limit flags are given in MiB. */
const MIB = 1024 * 1024;
const SWEEPS = { run: true, demo: true } as const;
const ALL = { run: true, demo: true, multiturn: true } as const;
/** run and multiturn, and replay (which sends to a server too). */
const NET = { ...RUN_MT, replay: true } as const;
/** Every command that measures: the sweeps, multiturn and replay. */
const MEASURING = { ...ALL, replay: true } as const;
/**
 * `capacity` takes a run flag with run's meaning where its probes are sent as run sends them; `passport` where its
 * prompts are (the server, the tokenizer, the request limits). Neither takes what it sets itself.
 */
const CAP = { capacity: true } as const;
const CAP_PASS = { capacity: true, passport: true } as const;

const TOKENIZER_FLAGS = [
  text("model", "Model name or path; loads the tokenizer unless --tokenizer is given (required)", {
    ...RUN_MT,
    demo: { help: "Tokenizer for the prompts (default: the bundled Qwen3 tokenizer)" },
    replay: { help: "Model name or path; loads the tokenizer unless --tokenizer is given (required, but not with --analyze)" },
    ...CAP_PASS,
  }),
  shaped(text("tokenizer", "tokenizer.json file, a directory holding one, or a Hugging Face repo id (default: --model)", { ...NET, ...CAP_PASS }), "tokenizer"),
  shaped(
    text(
      "revision",
      "Hugging Face revision for a repo-id tokenizer",
      { ...NET, ...CAP_PASS },
      // The demo's bundled tokenizer is a file: as run has it without the flag.
      { default: d.revision, bind: bindField("revision", (t) => t), fixed: { demo: null } },
    ),
    "revision",
  ),
] as const;

const SERVER_FLAGS = [
  shaped(
    text(
      "backend",
      "auto (ask the server), sglang (native /generate), vllm, llamacpp or openai (/v1/completions)",
      {
        run: true,
        demo: { help: "auto (the demo's mock answers as SGLang), sglang, vllm or openai (/v1/completions)" },
        multiturn: {
          help: "auto (ask the server), sglang (native /generate, token ids from output_ids), llamacpp (native /completion, ids from return_tokens), or openai / vllm (/v1/completions, output re-tokenized)",
        },
        replay: { help: "auto (ask the server), sglang (native /generate), vllm, llamacpp or openai (/v1/completions); token-id prompts" },
        ...CAP_PASS,
      },
      { default: d.backend, choices: BACKENDS, bind: bindField("backend", chosen(BACKENDS)) },
    ),
    "backend",
  ),
  shaped(
    text(
      "endpoint",
      "auto (the engine's own: /generate for SGLang, else /v1/completions), generate, completions, or chat (/v1/chat/completions, text prompts)",
      {
        run: true,
        demo: { help: "auto, generate, completions or chat (/v1/chat/completions, text prompts)" },
        ...CAP,
      },
      {
        default: d.endpoint,
        choices: ENDPOINTS,
        bind: bindField("endpoint", chosen(ENDPOINTS)),
        // The engine's own generation API, token ids in and out: conversations continue from the server's own ids, a
        // trace's blocks must reach the server as ids, the passport's answers check sends an answer back exactly.
        fixed: { multiturn: "auto", replay: "auto", passport: "auto" },
      },
    ),
    "endpoint",
  ),
  shaped(text("base-url", "Server base URL if not using --host and --port", { ...NET, ...CAP_PASS }), "baseUrl"),
  text("host", "Server host", { ...NET, ...CAP_PASS }, { default: d.host }),
  text("port", "Server port", { ...NET, ...CAP_PASS }, { default: d.port }),
  text(
    "api-key",
    "Bearer token for the server (else $SGLANG_API_KEY / $OPENAI_API_KEY); never printed",
    { ...NET, ...CAP_PASS },
    {
      bind: bindField.raw("apiKey", (raw, env) => str(raw, "api-key") ?? env.SGLANG_API_KEY ?? env.OPENAI_API_KEY ?? null),
      // The demo's options are run's; what it takes no flag for is as run has it without the flag.
      fixed: { demo: null },
    },
  ),
  text(
    "served-model-name",
    "Model name for the OpenAI backend (default: the first of /v1/models)",
    { ...NET, ...CAP_PASS },
    {
      bind: bindField.raw("servedModelName", textOf("served-model-name"), true),
      fixed: { demo: null },
    },
  ),
  text(
    "page-size",
    "Server KV page size for the expected cached tokens (default: /server_info's, else 1 for sglang and llamacpp, 16 for openai/vllm)",
    {
      run: true,
      multiturn: { help: "Server KV page size for the expected cached tokens (default: /server_info's, else 1 for sglang and 16 for openai/vllm)" },
      replay: { help: "Server KV page size for the expected cached tokens (default: /server_info's, else the backend's; --analyze: 1)" },
      ...CAP,
    },
    {
      bind: bindField.raw(
        "pageSize",
        (raw) => {
          const v = str(raw, "page-size");
          return v === undefined ? null : parseIntFlag("page-size", v, 1);
        },
        true,
      ),
      // The passport measures the page size (and the demo's mock states its own).
      fixed: { demo: null, passport: null },
    },
  ),
] as const;

const WORKLOAD_FLAGS = [
  shaped(
    text(
      "num-prompts",
      "Prompts per shared-prefix percentage",
      {
        run: true,
        demo: { default: dd.numPrompts },
        replay: { help: "Replay at most this many requests (of the slice)", default: null },
        capacity: {
          help: "Requests per probe (a p99 needs about 100 or more)",
          default: c.probeRequests,
          bind: bindField("probeRequests", (t, f) => parseIntFlag(f, t, 1)),
        },
      },
      {
        default: d.numPrompts,
        bind: bindField("numPrompts", (t, f) => parseIntAtLeast(f, t, 1, 'no request would be measured (the script then stops with "All requests failed")')),
      },
    ),
    "numPrompts",
  ),
  shaped(
    text(
      "total-tokens",
      "Input tokens per request (shared prefix + unique suffix)",
      { run: true, demo: { default: dd.totalTokens }, ...CAP },
      {
        default: d.totalTokens,
        bind: bindField("totalTokens", (t, f) =>
          parseIntAtLeast(f, t, 1, "every prompt would be empty, and a server cannot prefill or answer an empty prompt"),
        ),
      },
    ),
    "totalTokens",
  ),
  shaped(
    text(
      "output-len",
      "Output tokens per request",
      {
        run: true,
        demo: { default: dd.outputLen },
        multiturn: { help: "Output tokens per turn", default: md.outputLen },
        ...CAP,
      },
      {
        default: d.outputLen,
        bind: bindField("outputLen", (t, f) => parseIntAtLeast(f, t, 1, "without an output token there is no time to first token to measure (use 1 or more)")),
      },
    ),
    "outputLen",
  ),
  shaped(
    text(
      "max-concurrency",
      "Maximum concurrent requests; 0 = all prompts at once",
      {
        run: true,
        demo: { default: dd.maxConcurrency },
        multiturn: {
          help: "Turns in flight at once (bench_multiturn's max-parallel); 0 = every client",
          default: md.maxConcurrency,
          bind: bindField(
            "maxConcurrency",
            (t, f) => parseIntAtLeast(f, t, 0, "a concurrency limit cannot be negative (0 means every client at once)", 65535),
            true,
          ),
        },
        replay: {
          help: "Requests in flight at most; 0 = no limit (--ignore-timestamps needs one)",
          default: 0,
          bind: bindField("maxConcurrency", (t, f) => parseIntFlag(f, t, 0, 65535)),
        },
        capacity: {
          help: "--search rate: most requests in flight in a probe (0 = no limit, the open loop); --search concurrency: refused (the search sets it)",
          default: 0,
        },
      },
      {
        default: d.maxConcurrency,
        bind: bindField("maxConcurrency", (t, f) =>
          parseIntAtLeast(f, t, 0, "a concurrency limit cannot be negative (0 means unlimited, as in the script)", 65535),
        ),
      },
    ),
    "maxConcurrency",
  ),
  shaped(
    text(
      "pcts",
      "Comma-separated shared-prefix percentages to sweep",
      { run: true, demo: { default: dd.pcts }, capacity: { help: "Comma-separated shared-prefix percentages: one search each", default: c.pcts } },
      { default: d.pcts, bind: bindField("pcts", (t) => parsePcts(t)) },
    ),
    "pcts",
  ),
  shaped(
    text("request-rate", "Requests per second, or a comma list to sweep (one line per pct and rate); inf = next request when a slot is free", SWEEPS, {
      default: d.requestRate,
      bind: bindField("requestRates", (t) => parseRequestRates(t)),
    }),
    "requestRates",
  ),
  shaped(
    text(
      "burstiness",
      "Gamma shape of the gaps between arrivals: 1 = Poisson, larger = more regular, inf = evenly spaced",
      { ...SWEEPS, capacity: { help: "--search rate: gamma shape of the gaps between arrivals (1 = Poisson, inf = evenly spaced)" } },
      { default: d.burstiness, bind: bindField("burstiness", (t, f) => parsePositive(f, t, "a gamma shape > 0 (1 = Poisson) or inf", true)) },
    ),
    "burstiness",
  ),
  shaped(
    text(
      "duration",
      "Open loop: seconds during which requests arrive at the rate (instead of --num-prompts)",
      {
        run: { conflicts: { "num-prompts": "--num-prompts is the other way to stop a line; give one of them" } },
        demo: { conflicts: { "num-prompts": "--num-prompts is the other way to stop a line; give one of them" } },
        replay: { help: "Replay this many trace seconds from --start" },
        capacity: {
          help: "--search rate: seconds of arrivals per probe, instead of --num-prompts",
          conflicts: { "num-prompts": "--num-prompts is the other way to size a probe; give one of them" },
          bind: bindField("probeDurationS", (t, f) => parsePositive(f, t, "a number of seconds", false)),
        },
      },
      { bind: bindField("durationS", (t, f) => parsePositive(f, t, "a number of seconds", false)) },
    ),
    "durationS",
  ),
  shaped(
    text(
      "working-set",
      "Distinct shared prefixes in rotation per pct (cache pressure); a list, e.g. 1,4,16, sweeps them; auto: sizes whose prefixes fill half, all and twice the cache's capacity (from the server or --passport)",
      {
        run: true,
        multiturn: {
          help: "Distinct system prompts (client c uses c mod K): cache pressure",
          default: md.workingSet,
          bind: bindField(
            "workingSet",
            (t, f) => parseIntAtLeast(f, t, 1, "a working set holds at least one system prompt (1 = every client shares the same one)"),
            true,
          ),
        },
        capacity: { help: "Distinct shared prefixes in rotation during every probe (one size)" },
      },
      { default: d.workingSet },
    ),
    "workingSets",
  ),
  text(
    "repeat",
    "Measure every line N times, each from a flushed, proven, warmed cache with the same prompts (lines get a `repeat` axis; the console shows each metric's mean, 95 % CI and CV; gates judge the mean)",
    { run: true },
  ),
  text(
    "route",
    "With several --base-url replicas: how the client routes each request (round-robin, random, least-in-flight, session, prefix, oracle); every line then has a hit-loss ledger",
    {
      run: true,
      multiturn: {
        help: "With several --base-url replicas: how the client routes each turn (session: by conversation); every round then has a hit-loss ledger",
      },
      replay: {
        help: "With several --base-url replicas: how the client routes each request (session, prefix: by the trace's root block); the whole replay then has a hit-loss ledger",
      },
    },
    {
      default: "round-robin",
      choices: ROUTE_POLICIES,
      conflicts: { replicas: "with --replicas a router routes; --route is the client's own routing (--base-url A,B,...)" },
    },
  ),
  text(
    "server-cache",
    "How the server's prefix cache behaves, for the client's cache model: insert=prefill|finish, answers=cached|uncached, inflight=locked|evictable, order=fcfs|any (comma-separated; what is not stated, the model brackets both ways)",
    { ...MEASURING },
    { default: "unknown", bind: bindField("serverCache", (t, f) => parseCacheBehaviour(f, t)) },
  ),
  text(
    "warm-replicas",
    "With several --base-url replicas: warm each prefix where the route first sends it (route), or on every replica (all)",
    { run: true },
    // The demo's one mock: as run has it without the flag.
    { default: "route", choices: ["route", "all"], bind: bindField("warmReplicas", chosen(["route", "all"] as const)), fixed: { demo: null } },
  ),
  text(
    "passport",
    "A cache passport (warmbench passport --output-file): its page size and capacity are used where the server states none; whether answers are cached and when a prompt is, where --server-cache does not say",
    {
      run: true,
      multiturn: true,
      replay: true,
    },
  ),
  text(
    "replicas",
    "Behind a router at --base-url: the replicas' own URLs (A,B,...), used for the control plane only (flush, proof, warm, /server_info); the line gets a hit-loss ledger",
    {
      run: true,
      multiturn: true,
      replay: true,
    },
  ),
  text(
    "routing-key",
    "With --replicas: the header carrying each request's session key to the router: smg (X-SMG-Routing-Key), dynamo (X-Dynamo-Session-ID), aiperf (X-Session-Affinity), or a header name",
    {
      run: true,
      multiturn: true,
      replay: true,
    },
    { requires: "replicas" },
  ),
  text(
    "replica-header",
    "With --replicas: the response header naming the replica the router chose (a URL, host:port as nginx's $upstream_addr, or an index)",
    { run: true, multiturn: true, replay: true },
    {
      requires: "replicas",
    },
  ),
  bool(
    "check-fidelity",
    "After each line, compare greedy answers after a proven cache hit with answers after a proven flush, with log-probabilities (fidelity_* keys; gate fidelity_diverged==0)",
    {
      run: true,
      multiturn: {
        help: "After the last round, compare greedy answers to conversations' last turns after their history was proven cached with answers after a proven flush (fidelity_* keys on the last round's line)",
      },
      replay: {
        help: "After the replay, compare greedy answers to trace requests after their shared prefix was proven cached with answers after a proven flush (fidelity_* keys on the whole replay's line)",
      },
    },
  ),
  text(
    "fidelity-sample",
    "--check-fidelity: prompts compared per line (each costs two flushes and three unmeasured requests)",
    {
      run: true,
      multiturn: { help: "--check-fidelity: conversations whose last turn is compared" },
      replay: { help: "--check-fidelity: trace requests compared (of those a prefix was shared with)" },
    },
    {
      default: FIDELITY_DEFAULTS.sample,
      requires: "check-fidelity",
    },
  ),
  text(
    "fidelity-tie-nats",
    "--check-fidelity: a first difference whose two tokens are each in the other's top 5 and at most this many nats apart is a near tie, not a divergence",
    { run: true, multiturn: true, replay: true },
    {
      default: FIDELITY_DEFAULTS.tieNats,
      requires: "check-fidelity",
    },
  ),
  text(
    "repeat-until-cv",
    "With --repeat N as the most: stop repeating a line once the CV (sd/mean) of its gated metrics (else p99_ttft_ms and mean_itl_ms) is below this percent (e.g. 5%), after 2 repeats at least",
    { run: true },
  ),
] as const;

/** The conversation's shape (names as SGLang's bench_multiturn.py). */
const CONVERSATION_FLAGS = [
  text(
    "num-clients",
    "Conversations run side by side",
    { multiturn: true },
    { default: md.numClients, bind: bindField("numClients", (t, f) => parseIntAtLeast(f, t, 1, "a conversation needs at least one client"), true) },
  ),
  text(
    "num-rounds",
    "Turns per conversation",
    { multiturn: true },
    {
      default: md.numRounds,
      bind: bindField("numRounds", (t, f) => parseIntAtLeast(f, t, 1, "each client needs at least one round (turn) to be measured"), true),
    },
  ),
  text(
    "turn-tokens",
    "New user tokens in every turn (bench_multiturn's sub-question-input-length)",
    { multiturn: true },
    { default: md.turnTokens, bind: bindField("turnTokens", (t, f) => parseIntAtLeast(f, t, 1, "every user turn adds at least one new token"), true) },
  ),
  text("first-turn-tokens", "New user tokens of the first turn (bench_multiturn's request-length; default: --turn-tokens)", { multiturn: true }),
  text(
    "shared-system-tokens",
    "A system prompt every conversation starts with (warmed before round 0)",
    { multiturn: true },
    { default: md.sharedSystemTokens, bind: bindField("sharedSystemTokens", (t, f) => parseIntFlag(f, t, 0), true) },
  ),
  bool(
    "round-barrier",
    "Hold round r until every client finished round r-1 (bench_multiturn's --enable-round-barrier)",
    { multiturn: true },
    {
      bind: bindField.raw("roundBarrier", switchOf("round-barrier"), true),
    },
  ),
  text(
    "think-time",
    "Seconds a client waits between its turns: 0.5, exp:MEAN or uniform:LOW:HIGH",
    { multiturn: true },
    { default: md.thinkTime, bind: bindField("thinkTime", (t) => parseThinkTime(t), true) },
  ),
  text(
    "ready-queue-policy",
    `Which ready client goes next: ${READY_QUEUE_POLICIES.join(", ")}`,
    { multiturn: true },
    { default: md.readyQueuePolicy, choices: READY_QUEUE_POLICIES, bind: bindField("readyQueuePolicy", chosen(READY_QUEUE_POLICIES), true) },
  ),
] as const;

/** What every measuring command takes with the same meaning (their help differs where a pct is a round). */
const SHARED_FLAGS = [
  text(
    "seed",
    "Random seed for prompt generation (Python random.Random compatible)",
    { ...MEASURING, ...CAP, passport: { help: "Seed of the passport's random prompts" } },
    {
      default: d.seed,
      bind: bindField("seed", (t) => parseSeed(t), true),
    },
  ),
  bool(
    "disable-ignore-eos",
    "Let requests stop at EOS (ignore_eos=false)",
    { ...MEASURING, ...CAP },
    { bind: bindField.raw("disableIgnoreEos", switchOf("disable-ignore-eos"), true) },
  ),
  text(
    "output-file",
    "JSONL file to append one result object per shared-prefix percentage",
    {
      ...SWEEPS,
      multiturn: { help: "JSONL file to append one line per round" },
      replay: { help: "JSONL file to append one line per --window and one for the whole replay (--analyze: the analysis as one JSON object)" },
      capacity: { help: "JSONL file to append every probe's line and one capacity line per pct" },
      passport: { help: "Write the passport as JSON to this file (replay and the replicas' ledger read it)" },
    },
    { bind: bindField.raw("outputFile", textOf("output-file")) },
  ),
  text(
    "extra-request-body",
    "JSON object merged into every request payload",
    { ...MEASURING, ...CAP_PASS },
    {
      bind: bindField.raw("extraRequestBody", (raw) => parseExtraBody(str(raw, "extra-request-body") ?? "{}"), true),
    },
  ),
  text(
    "dump-prompts",
    "Write every prompt's token ids, one JSON line per prompt, to this file",
    {
      ...SWEEPS,
      multiturn: { help: "Write every turn's token ids, one JSON line per turn, to this file" },
      replay: { help: "Write every request's token ids, one JSON line per request (its trace line and hash ids), to this file" },
    },
    { bind: bindField.raw("dumpPrompts", textOf("dump-prompts")) },
  ),
  text(
    "request-details",
    "Write one JSONL line per measured request (timestamps, cached tokens) to this file",
    {
      ...SWEEPS,
      multiturn: { help: "Write one JSONL line per turn (timestamps, cached tokens per tier) to this file" },
      replay: { help: "Write one JSONL line per request (timestamps, cached tokens, the predicted range) to this file" },
    },
    { bind: bindField.raw("requestDetails", textOf("request-details")) },
  ),
  text(
    "settle",
    "Seconds to wait after each cache flush",
    {
      run: true,
      demo: { default: dd.settleS },
      multiturn: { help: "Seconds to wait after the cache flush" },
      replay: { help: "Seconds to wait after the cache flush" },
      ...CAP,
    },
    {
      default: d.settleMs / 1000,
      bind: bindField("settleMs", (t, f) => parseNumberFlag(f, t, 0) * 1000),
    },
  ),
  // Not the demo's: its own mock is idle whenever it is flushed, so it never answers busy (refused below).
  text(
    "flush-deadline",
    "Seconds to keep retrying a busy /flush_cache",
    { ...NET, ...CAP_PASS },
    {
      default: d.flushDeadlineS,
      bind: bindField("flushDeadlineS", (t, f) => parseNumberFlag(f, t, 0)),
      fixed: { demo: null },
    },
  ),
  text(
    "request-timeout",
    "Seconds one request may take in all",
    { ...MEASURING, ...CAP_PASS },
    {
      default: d.requestTimeoutS,
      bind: bindField("requestTimeoutS", (t, f) => parseNumberFlag(f, t, 0.001), true),
    },
  ),
  text(
    "stall-timeout",
    "Seconds without any byte before a request fails as stalled",
    { ...MEASURING, ...CAP_PASS },
    {
      default: d.stallTimeoutS,
      bind: bindField("stallTimeoutS", (t, f) => parseNumberFlag(f, t, 0.001), true),
    },
  ),
  text(
    "sse-line-max-mib",
    "The longest line of a streamed answer the client reads, MiB; a longer one fails its request as a protocol failure (a server that never ends a line cannot grow the client's memory)",
    { ...MEASURING, ...CAP_PASS },
    {
      default: d.maxSseLineBytes / MIB,
      bind: bindField("maxSseLineBytes", (t, f) => parseIntFlag(f, t, 1, 4096) * MIB, true),
    },
  ),
  text(
    "control-body-max-mib",
    "The largest answer the client reads of a control call (/server_info, /metrics, a flush, a fidelity answer), MiB; a larger one fails the call",
    { ...MEASURING, ...CAP_PASS },
    {
      default: d.maxControlBodyBytes / MIB,
      bind: bindField("maxControlBodyBytes", (t, f) => parseIntFlag(f, t, 1, 4096) * MIB, true),
    },
  ),
  text(
    "flush",
    "Cache flush before each pct: auto (the backend's way) or none",
    {
      ...SWEEPS,
      multiturn: { help: "Cache flush before round 0: auto (the backend's way) or none" },
      replay: { help: "Cache flush before the first request: auto (the backend's way) or none" },
    },
    // The passport's flushes are proven by its measurements themselves; the preflight checks what it can reach.
    { default: d.flush, choices: FLUSH_MODES, bind: bindField("flush", chosen(FLUSH_MODES)), fixed: { passport: "auto" } },
  ),
  text("verify-cache", "Check cached tokens against the expected prefix: off, warn or strict (exit 4)", MEASURING, {
    default: d.verifyCache,
    choices: VERIFY_CACHE_MODES,
    bind: bindField("verifyCache", chosen(VERIFY_CACHE_MODES)),
    fixed: { passport: "warn" },
  }),
  text(
    "cache-tolerance",
    "Share of requests per pct that may disagree under --verify-cache strict (a percent, e.g. 5%)",
    {
      ...SWEEPS,
      multiturn: { help: "Share of a round's turns that may disagree under --verify-cache strict (a percent, e.g. 5%)" },
      replay: {
        help: "Share of the replay's requests whose cached tokens may fall short of their predicted range unexplained under --verify-cache strict (a percent, e.g. 5%)",
      },
      capacity: { help: "Share of a probe's requests whose cached tokens may disagree before its cache check fails (a percent, e.g. 5%)" },
    },
    {
      default: d.cacheTolerance,
      bind: bindField("cacheTolerance", (t, f) => parseFraction(f, t)),
    },
  ),
  bool(
    "strict",
    "Exit 5 when the client itself was saturated (event-loop lag or JS-thread CPU) during a pct",
    {
      ...SWEEPS,
      multiturn: { help: "Exit 5 when the client itself was saturated (event-loop lag or JS-thread CPU) during a round" },
    },
    { bind: bindField.raw("strict", switchOf("strict")), fixed: { replay: null } },
  ),
  text("workers", "Processes on this machine sharing the load (this one included), or auto: one per 256 streams, up to cores-1", {
    ...SWEEPS,
    multiturn: { help: "Processes on this machine sharing the conversations (this one included; client c runs in process c mod N), or auto" },
  }),
  // A process of a run that a launcher (srun, a Kubernetes Indexed Job, a script) started.
  text("shard", "This process's part of a run started by a launcher: I/N, or auto under Slurm's srun (needs $WARMBENCH_SHARD_TOKEN across nodes)", RUN_MT),
  text("coordinator", "HOST:PORT where shard 0 listens (--shard I/N; under Slurm derived from the job and step ids)", RUN_MT),
  text(
    "gate",
    "Pass/fail threshold METRIC OP VALUE[@pct OP N], e.g. 'p99_ttft_ms<=800@pct>=90', VALUE in the key's unit (a share: 0.45 or 45%); repeatable; exit 6 when one fails",
    {
      ...SWEEPS,
      multiturn: { help: "Pass/fail threshold METRIC OP VALUE judged on every round line, e.g. 'p99_ttft_ms<=800'; repeatable; exit 6 when one fails" },
      capacity: { help: "An SLO every probe must meet, METRIC OP VALUE, e.g. 'ttft_from_intended_p99_ms<=500' or 'failed==0'; repeatable; at least one" },
      replay: {
        help: "Pass/fail threshold METRIC OP VALUE judged on the whole replay's line, e.g. 'ttft_from_intended_p99_ms<=800' or 'fidelity_diverged<=0'; repeatable; exit 6 when one fails",
      },
    },
    { repeatable: true },
  ),
  text("gates-file", "File with one gate per line (# comments)", { ...ALL, ...CAP, replay: true }),
  // Not multiturn's: it draws no progress line (refused below).
  bool(
    "quiet",
    "No progress line on stderr",
    {
      ...SWEEPS,
      replay: true,
      multiturn: { help: "Only warnings and errors on stderr (multiturn draws no progress line; --quiet means the same quiet in every command)" },
      ...CAP_PASS,
    },
    {
      bind: bindField.raw("quiet", switchOf("quiet")),
    },
  ),
  bool(
    "keep-going",
    "When an output file fails mid-run (a full disk), measure the remaining points anyway (default: stop after the line being written; every line measured is kept; exit 9 either way)",
    { ...SWEEPS },
    { bind: bindField.raw("keepGoing", switchOf("keep-going")) },
  ),
  bool(
    "verbose",
    "Show stack traces and debug logs",
    { ...MEASURING, ...CAP_PASS, report: true, compare: true, merge: true, history: true },
    { bind: bindField.raw("verbose", switchOf("verbose")) },
  ),
] as const;

/** run's order in --help: the script's flags first, then ours. */
export const MEASURE_FLAGS: readonly FlagDecl[] = [
  ...SERVER_FLAGS.slice(0, 2),
  ...SERVER_FLAGS.slice(2, 5),
  ...TOKENIZER_FLAGS.slice(0, 2),
  ...WORKLOAD_FLAGS,
  ...CONVERSATION_FLAGS,
  ...SHARED_FLAGS,
  TOKENIZER_FLAGS[2],
  ...SERVER_FLAGS.slice(5),
];

/** Every declaration above as written (its commands, defaults and bindings), for the types of the options they fill. */
export type MeasureDecl =
  | (typeof TOKENIZER_FLAGS)[number]
  | (typeof SERVER_FLAGS)[number]
  | (typeof WORKLOAD_FLAGS)[number]
  | (typeof CONVERSATION_FLAGS)[number]
  | (typeof SHARED_FLAGS)[number];

/** Flags that would silently do nothing in a command: refused there by name, with the reason. */
export const REFUSED_FLAGS: RefusedFlag[] = [
  // Server flags, in the demo, which brings its own server.
  ...["base-url", "host", "port"].map(
    (name): RefusedFlag => ({
      name,
      commands: ["demo"],
      reason: `the demo runs against its own mock server; use \`warmbench run --${name} ...\` for yours`,
    }),
  ),
  {
    name: "flush-deadline",
    commands: ["demo"],
    reason: "the demo's own mock is idle whenever it is flushed: it never answers busy, so there is nothing to retry",
  },
  // The request count is --num-prompts and the seconds of arrivals --duration in every command (renamed in 0.4).
  { name: "probe-requests", commands: ["capacity"], reason: "renamed: the requests per probe are --num-prompts, the request count of every command" },
  { name: "probe-duration", commands: ["capacity"], reason: "renamed: the seconds of arrivals per probe are --duration, as in run" },
  { name: "limit", commands: ["replay"], reason: "renamed: the most requests replayed are --num-prompts, the request count of every command" },
];
