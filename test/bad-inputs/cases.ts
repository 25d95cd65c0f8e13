/**
 * Every bad input tried, per command: what was given, the exit code and the line that names the culprit. The suite
 * runs each (test/integration/bad-inputs.test.ts: the compiled binary against a mock that must receive no generation
 * request), and docs/reference/bad-inputs.md is generated from this table (`npm run docs`).
 *
 * Placeholders: {TOK} a real tokenizer.json, {MOCK} the mock's URL, {DIR} a fresh directory, {A} and {B} two results
 * files of one workload (two runs), {TORN} a results file whose last line is cut off, {BIN} a binary file,
 * {EMPTY} an empty file, {FOREIGN} a JSON line that is no results line, {TRACE_BAD} a trace with a broken line 2.
 * Invalid lines ({B}'s line edited in one key): {INF} mean_ttft_ms Infinity, {FAST} mean_ttft_ms "fast", {NEG}
 * p99_ttft_ms -1, {NO_EVIDENCE} the evidence block removed, {NO_SAMPLES} evidence.samples {}, {MINUS_ONE} completed
 * -1, {FUTURE} schema_version 999. {MOCK_LOCALHOST} the mock's URL with localhost for 127.0.0.1, {PASSPORT_PAGE_E18} a
 * passport whose page size is 1e18; every other {PASSPORT_*} is SOUND_PASSPORT (taken against the mock) with one field
 * forged (FORGED_PASSPORTS). {DB_DROPPED} a history of {A} whose table `lines` was dropped.
 */
import { MOCK_VERSION } from "../../src/mock/info.ts";

export interface BadInput {
  command: string;
  /** Arguments after the binary, placeholders unexpanded. */
  args: string[];
  exit: number;
  /** A part of the one error line (placeholders expanded). */
  message: string;
  /** What this case is, for the docs. */
  what: string;
}

const RUN = ["--model", "{TOK}", "--base-url", "{MOCK}", "--settle", "0"];
const MT = ["multiturn", ...RUN];
const CAP = ["capacity", ...RUN, "--gate", "p99_ttft_ms<=500"];

/** A passport --passport takes against the mock (its engine and version). */
export const SOUND_PASSPORT = {
  kind: "warmbench-passport",
  version: 1,
  warmbench_version: "0.4.0",
  engine: "sglang",
  server_version: MOCK_VERSION,
  page_size_tokens: { value: 16, method: "forged", uncertainty: "exact", why: null },
  capacity_tokens: { value: 4000, method: "forged", uncertainty: "-0/+16 tokens (one page)", why: null },
};

const page = (value: unknown) => ({ page_size_tokens: { ...SOUND_PASSPORT.page_size_tokens, value } });
const capacity = (value: unknown) => ({ capacity_tokens: { ...SOUND_PASSPORT.capacity_tokens, value } });

/** Each {PASSPORT_*} placeholder but {PASSPORT_PAGE_E18}: SOUND_PASSPORT with these fields over it. */
export const FORGED_PASSPORTS: Readonly<Record<string, Record<string, unknown>>> = {
  PASSPORT_PAGE_0: page(0),
  PASSPORT_PAGE_NEG: page(-16),
  PASSPORT_PAGE_TEXT: page("16"),
  PASSPORT_PAGE_FRACTION: page(16.5),
  PASSPORT_CAPACITY_NEG: capacity(-5),
  PASSPORT_CAPACITY_E300: capacity(1e300),
  PASSPORT_CAPACITY_BARE: { capacity_tokens: 4000 },
  PASSPORT_VERSION_2: { version: 2 },
  PASSPORT_SERVER_VERSION_NUMBER: { server_version: 7 },
  PASSPORT_ENGINE_EMPTY: { engine: "" },
  PASSPORT_SERVER_VERSION_NULL: { server_version: null },
  PASSPORT_SERVER_VERSION_OTHER: { server_version: "0.0.1-other" },
  PASSPORT_ENGINE_OTHER: { engine: "llama.cpp" },
  PASSPORT_ANSWERS_TEXT: { outputs_cached: { value: "yes", method: "forged", uncertainty: "exact", why: null } },
  PASSPORT_INSERT_OTHER: { insert_at: { value: "sometime", method: "forged", uncertainty: "exact", why: null } },
};

/** run --passport {name}: exit 2, the line naming the file and the field (or what the server is instead). */
const forged = (name: keyof typeof FORGED_PASSPORTS & string, what: string, message: string): BadInput => ({
  command: "run",
  what,
  args: [...RUN, "--passport", `{${name}}`],
  exit: 2,
  message: `--passport {${name}}: ${message}`,
});

const DROPPED = "a damaged warmbench history: its table lines is missing; left untouched";

export const BAD_INPUTS: readonly BadInput[] = [
  // run
  { command: "run", what: "an empty prompt", args: [...RUN, "--total-tokens", "0"], exit: 2, message: "--total-tokens 0: every prompt would be empty" },
  {
    command: "run",
    what: "a prompt past any model",
    args: [...RUN, "--total-tokens", "2000000000"],
    exit: 2,
    message: "--total-tokens 2000000000: above the most warmbench takes, 10000000",
  },
  {
    command: "run",
    what: "a prompt past the server's context",
    args: [...RUN, "--total-tokens", "200000", "--pcts", "50"],
    exit: 2,
    message: "exceed the server's context of 131072 tokens",
  },
  { command: "run", what: "no prompt", args: [...RUN, "--num-prompts", "0"], exit: 2, message: "--num-prompts 0: no request would be measured" },
  { command: "run", what: "too many prompts", args: [...RUN, "--num-prompts", "99999999999"], exit: 2, message: "--num-prompts 99999999999: above the most" },
  {
    command: "run",
    what: "prompts that would not fit in memory",
    args: [...RUN, "--num-prompts", "1000000", "--max-concurrency", "0", "--total-tokens", "1000000", "--pcts", "0"],
    exit: 2,
    message: "over half this machine's memory",
  },
  { command: "run", what: "no output token", args: [...RUN, "--output-len", "0"], exit: 2, message: "--output-len 0: without an output token" },
  { command: "run", what: "a pct over 100", args: [...RUN, "--pcts", "101"], exit: 2, message: "--pcts" },
  { command: "run", what: "a negative concurrency", args: [...RUN, "--max-concurrency", "-1"], exit: 2, message: "--max-concurrency -1" },
  { command: "run", what: "a rate of 0", args: [...RUN, "--request-rate", "0"], exit: 2, message: "--request-rate 0: a rate must be > 0" },
  { command: "run", what: "an empty working set", args: [...RUN, "--working-set", "0"], exit: 2, message: "--working-set 0" },
  { command: "run", what: "no repeat", args: [...RUN, "--repeat", "0"], exit: 2, message: "--repeat: must be >= 1" },
  {
    command: "run",
    what: "a relative value without its percent sign",
    args: [...RUN, "--cache-tolerance", "0.05"],
    exit: 2,
    message: "--cache-tolerance 0.05: write the percent sign (5%)",
  },
  {
    command: "run",
    what: "a scheduling order the cache model does not know",
    args: [...RUN, "--server-cache", "order=lpm"],
    exit: 2,
    message: '--server-cache: "order=lpm": order is one of fcfs, any',
  },
  { command: "run", what: "a settle of 30 years", args: [...RUN, "--settle", "1e9"], exit: 2, message: "--settle 1000000000: above the most warmbench takes" },
  // Server telemetry (issue 39).
  {
    command: "run",
    what: "a scrape interval under 250 ms",
    args: [...RUN, "--scrape-interval", "100ms"],
    exit: 2,
    message: "--scrape-interval 100ms: at least 250ms",
  },
  {
    command: "run",
    what: "a scrape interval that is no duration",
    args: [...RUN, "--scrape-interval", "fast"],
    exit: 2,
    message: '--scrape-interval "fast": expected a duration',
  },
  { command: "run", what: "a gate on no key", args: [...RUN, "--gate", "p99_ttft<=5"], exit: 2, message: "p99_ttft is not a numeric key" },
  {
    command: "run",
    what: "an empty gate (an unset shell variable)",
    args: [...RUN, "--gate", ""],
    exit: 2,
    message: '--gate "": an empty gate judges nothing',
  },
  {
    command: "run",
    what: "a gate whose scope matches no line",
    args: [...RUN, "--pcts", "0", "--gate", "p99_ttft_ms<=5@pct=50"],
    exit: 2,
    message: "its scope matches no line of this run",
  },
  {
    command: "run",
    what: "a server URL that is not http",
    args: [...RUN.slice(0, 2), "--base-url", "ftp://127.0.0.1:1"],
    exit: 2,
    message: '--base-url: "ftp://127.0.0.1:1" must start with http:// or https://',
  },
  {
    command: "run",
    what: "a server URL with a query (and a password, not shown)",
    args: ["--model", "{TOK}", "--base-url", "http://admin:pw@127.0.0.1:1/?x=1"],
    exit: 2,
    message: '"http://(credentials redacted)@127.0.0.1:1/?x=1" must not have a query',
  },
  { command: "run", what: "no model", args: ["--base-url", "{MOCK}"], exit: 2, message: "--model is required" },
  {
    command: "run",
    what: "a replica named twice",
    args: ["--model", "{TOK}", "--base-url", "{MOCK},{MOCK}", "--settle", "0"],
    exit: 2,
    message: "--base-url: a replica is named twice",
  },
  {
    command: "run",
    what: "an empty replica URL",
    args: ["--model", "{TOK}", "--base-url", "{MOCK},", "--settle", "0"],
    exit: 2,
    message: "an empty replica URL",
  },
  {
    command: "run",
    what: "a routing policy for one server",
    args: [...RUN, "--route", "session"],
    exit: 2,
    message: "--route: routing needs several replicas",
  },
  {
    command: "run",
    what: "an unknown routing policy",
    args: ["--model", "{TOK}", "--base-url", "{MOCK},http://127.0.0.1:9", "--route", "sticky"],
    exit: 2,
    message: "--route",
  },
  {
    command: "run",
    what: "replicas with more client processes",
    args: ["--model", "{TOK}", "--base-url", "{MOCK},http://127.0.0.1:9", "--workers", "2"],
    exit: 2,
    message: "the client routes in one process",
  },
  {
    command: "run",
    what: "replicas behind a router without its answer header",
    args: [...RUN, "--replicas", "http://127.0.0.1:9,http://127.0.0.1:10"],
    exit: 2,
    message: "--replica-header NAME",
  },
  {
    command: "run",
    what: "a routing key without a router",
    args: [...RUN, "--routing-key", "smg"],
    exit: 2,
    message: "--routing-key: only --replicas reads it (add --replicas)",
  },
  {
    command: "run",
    what: "a routing key that is no header name",
    args: [...RUN, "--replicas", "http://127.0.0.1:9", "--replica-header", "X-Served-By", "--routing-key", "a b"],
    exit: 2,
    message: "not a header name",
  },
  {
    command: "run",
    what: "a fidelity setting without the check",
    args: [...RUN, "--fidelity-sample", "2"],
    exit: 2,
    message: "--fidelity-sample: only --check-fidelity reads it",
  },
  {
    command: "run",
    what: "a fidelity gate without the check",
    args: [...RUN, "--gate", "fidelity_diverged==0"],
    exit: 2,
    message: '--gate "fidelity_diverged==0": fidelity_diverged is measured only with --check-fidelity (add it)',
  },
  {
    command: "run",
    what: "two ways to stop a line (--duration and --num-prompts)",
    args: [...RUN, "--request-rate", "5", "--duration", "2", "--num-prompts", "8"],
    exit: 2,
    message: "--duration: not with --num-prompts: --num-prompts is the other way to stop a line; give one of them",
  },
  {
    command: "capacity",
    what: "two ways to size a probe (--duration and --num-prompts)",
    args: [...CAP, "--duration", "2", "--num-prompts", "8"],
    exit: 2,
    message: "--duration: not with --num-prompts: --num-prompts is the other way to size a probe; give one of them",
  },
  {
    command: "run",
    what: "a gate on a share outside [0, 1] (it could never pass)",
    args: [...RUN, "--gate", "observed_hit_ratio>=45"],
    exit: 2,
    message: "observed_hit_ratio is a share in [0, 1] (0% to 100%), so 45 can never be its value (45% is 0.45)",
  },
  {
    command: "run",
    what: "a percent sign on a key that is not a ratio",
    args: [...RUN, "--gate", "p99_ttft_ms<=5%"],
    exit: 2,
    message: "p99_ttft_ms is in ms, not a ratio: write its value without a percent sign",
  },
  {
    command: "run",
    what: "a hit-loss ledger gate with one server",
    args: [...RUN, "--gate", "loss_routing_ratio<=0.05"],
    exit: 2,
    message: "loss_routing_ratio is measured only with several replicas (--base-url A,B,... or --replicas)",
  },
  {
    command: "multiturn",
    what: "a hit-loss ledger gate with one server",
    args: [...MT, "--gate", "ledger_delivered_tokens>=1"],
    exit: 2,
    message: "ledger_delivered_tokens is measured only with several replicas",
  },
  {
    command: "run",
    what: "the fidelity check on chat",
    args: [...RUN, "--check-fidelity", "--endpoint", "chat"],
    exit: 2,
    message: "--check-fidelity with --endpoint chat",
  },
  { command: "run", what: "an unknown backend", args: [...RUN, "--backend", "tgi"], exit: 2, message: '--backend: "tgi" is not supported' },
  {
    command: "run",
    what: "a request body that is not an object",
    args: [...RUN, "--extra-request-body", "[1]"],
    exit: 2,
    message: "--extra-request-body: expected a JSON object",
  },
  { command: "run", what: "a seed that is no integer", args: [...RUN, "--seed", "abc"], exit: 2, message: "--seed: expected an integer" },
  {
    command: "run",
    what: "an output file in /proc",
    args: [...RUN, "--output-file", "/proc/version"],
    exit: 2,
    message: "--output-file: cannot write /proc/version: EIO",
  },
  {
    command: "run",
    what: "request details to a full device",
    args: [...RUN, "--request-details", "/dev/full"],
    exit: 2,
    message: "--request-details: cannot write /dev/full: ENOSPC",
  },
  {
    command: "run",
    what: "appending to a torn results file",
    args: [...RUN, "--output-file", "{TORN}"],
    exit: 2,
    message: "its last line (line 2) is cut off",
  },
  { command: "run", what: "appending to a binary file", args: [...RUN, "--output-file", "{BIN}"], exit: 2, message: "a binary file, not a results file" },
  {
    command: "run",
    what: "appending to a foreign file",
    args: [...RUN, "--output-file", "{FOREIGN}"],
    exit: 2,
    message: "its first line is not a JSON results line",
  },
  {
    command: "run",
    what: "an output directory that does not exist",
    args: [...RUN, "--output-file", "{DIR}/no/such/dir/out.jsonl"],
    exit: 2,
    message: "does not exist",
  },
  // Issue 37: a results file is never replaced by another output; one server under two names is one replica; a
  // forged passport is refused naming its field.
  {
    command: "run",
    what: "--request-details pointed at an existing results file",
    args: [...RUN, "--request-details", "{A}"],
    exit: 2,
    message: "--request-details {A}: a results file (its first line is a results line), which --request-details would replace",
  },
  {
    command: "run",
    what: "--request-details the same file as --output-file",
    args: [...RUN, "--output-file", "{DIR}/same.jsonl", "--request-details", "{DIR}/same.jsonl"],
    exit: 2,
    message: "--request-details {DIR}/same.jsonl: the same file as --output-file",
  },
  {
    command: "run",
    what: "--dump-prompts pointed at an existing results file",
    args: [...RUN, "--dump-prompts", "{B}"],
    exit: 2,
    message: "--dump-prompts {B}: a results file",
  },
  {
    command: "run",
    what: "one server as two replicas (127.0.0.1 and localhost)",
    args: [...RUN, "--base-url", "{MOCK},{MOCK_LOCALHOST}"],
    exit: 2,
    message: "--base-url: a replica is named twice ({MOCK} and {MOCK_LOCALHOST} are one server)",
  },
  {
    command: "run",
    what: "a forged passport (page size 1e18)",
    args: [...RUN, "--passport", "{PASSPORT_PAGE_E18}"],
    exit: 2,
    message: "--passport {PASSPORT_PAGE_E18}: page_size_tokens.value is 1000000000000000000, not an integer page size from 1 to 1000000",
  },
  forged("PASSPORT_PAGE_0", "a forged passport (page size 0)", "page_size_tokens.value is 0, not an integer page size from 1 to 1000000"),
  forged("PASSPORT_PAGE_NEG", "a forged passport (page size -16)", "page_size_tokens.value is -16, not an integer page size"),
  forged("PASSPORT_PAGE_TEXT", 'a forged passport (page size "16", a string)', 'page_size_tokens.value is "16", not an integer page size'),
  forged("PASSPORT_PAGE_FRACTION", "a forged passport (page size 16.5)", "page_size_tokens.value is 16.5, not an integer page size"),
  forged("PASSPORT_CAPACITY_NEG", "a forged passport (capacity -5)", "capacity_tokens.value is -5, not a positive integer of tokens"),
  forged("PASSPORT_CAPACITY_E300", "a forged passport (capacity 1e300)", "capacity_tokens.value is 1e+300, not a positive integer of tokens"),
  forged("PASSPORT_CAPACITY_BARE", "a forged passport (a bare capacity number, no figure)", "capacity_tokens is 4000, not a passport figure"),
  forged("PASSPORT_VERSION_2", "a forged passport (version 2)", "version is 2, not a passport version this warmbench reads (1)"),
  forged("PASSPORT_SERVER_VERSION_NUMBER", "a forged passport (a server_version that is a number)", "server_version is 7, neither a version string nor null"),
  forged("PASSPORT_ENGINE_EMPTY", "a forged passport (an empty engine name)", 'engine is "", not an engine name'),
  forged("PASSPORT_ANSWERS_TEXT", 'a forged passport (answers cached "yes")', 'outputs_cached.value is "yes", neither true, false nor null'),
  forged("PASSPORT_INSERT_OTHER", 'a forged passport (a prompt cached at "sometime")', 'insert_at.value is "sometime", neither "prefill", "finish" nor null'),
  // Well formed, but of another server: refused at the preflight, still before any generation request.
  forged(
    "PASSPORT_SERVER_VERSION_NULL",
    "a passport stating no server version (null), for a server that states one",
    `measured on server version (none stated), but the server is ${MOCK_VERSION} (measure it again)`,
  ),
  forged("PASSPORT_SERVER_VERSION_OTHER", "a passport of another server version", `measured on server version 0.0.1-other, but the server is ${MOCK_VERSION}`),
  forged("PASSPORT_ENGINE_OTHER", "a passport of another engine", "measured on llama.cpp, but the server is sglang"),
  // multiturn
  {
    command: "multiturn",
    what: "a hundred billion conversations",
    args: [...MT, "--num-clients", "100000000000", "--num-rounds", "2"],
    exit: 2,
    message: "--num-clients 100000000000: above the most warmbench takes, 1000000",
  },
  {
    command: "multiturn",
    what: "histories that would not fit in memory",
    args: [...MT, "--num-clients", "100000", "--num-rounds", "200", "--turn-tokens", "4000"],
    exit: 2,
    message: "over half this machine's memory",
  },
  {
    command: "multiturn",
    // 0.4 estimated the ids alone and reached 6 GB in 5 s; the memory model counts every conversation and turn.
    what: "the most conversations the flag takes, each of them small",
    args: [...MT, "--num-clients", "1000000", "--num-rounds", "3", "--first-turn-tokens", "32", "--turn-tokens", "16", "--shared-system-tokens", "0"],
    exit: 2,
    message: "at its peak (the memory model, docs/performance.md), over half this machine's memory",
  },
  { command: "multiturn", what: "no round", args: [...MT, "--num-rounds", "0"], exit: 2, message: "--num-rounds" },
  {
    command: "multiturn",
    what: "a working set without a system prompt",
    args: [...MT, "--working-set", "2"],
    exit: 2,
    message: "it needs --shared-system-tokens > 0",
  },
  {
    command: "multiturn",
    what: "a last turn past the context",
    // Four conversations: their histories fit this machine's memory, not the model's context.
    args: [...MT, "--num-clients", "4", "--num-rounds", "100", "--turn-tokens", "4000"],
    exit: 2,
    message: "the model's context length 131072",
  },
  {
    command: "multiturn",
    what: "replicas with more client processes",
    args: ["multiturn", "--model", "{TOK}", "--base-url", "{MOCK},http://127.0.0.1:9", "--settle", "0", "--workers", "2"],
    exit: 2,
    message: "the client routes in one process",
  },
  // capacity
  {
    command: "capacity",
    what: "several replicas",
    args: ["capacity", "--model", "{TOK}", "--base-url", "{MOCK},http://127.0.0.1:9", "--gate", "p99_ttft_ms<=500"],
    exit: 2,
    message: "routed by run and multiturn only",
  },
  {
    command: "capacity",
    what: "a precision without its percent sign",
    args: [...CAP, "--precision", "0.05"],
    exit: 2,
    message: "--precision 0.05: write the percent sign (5%)",
  },
  {
    command: "capacity",
    what: "a precision of 50 %",
    args: [...CAP, "--precision", "50%"],
    exit: 2,
    message: "--precision 50%: must be above 0% and below 50%",
  },
  {
    command: "capacity",
    what: "0.3's name of the request count",
    args: [...CAP, "--probe-requests", "50"],
    exit: 2,
    message: "--probe-requests: renamed: the requests per probe are --num-prompts",
  },
  {
    command: "capacity",
    what: "0.3's name of the seconds per probe",
    args: [...CAP, "--probe-duration", "5"],
    exit: 2,
    message: "--probe-duration: renamed: the seconds of arrivals per probe are --duration",
  },
  {
    command: "replay",
    what: "0.3's name of the request count",
    args: ["replay", "{DIR}/none.jsonl", "--block-size", "16", ...RUN, "--limit", "5"],
    exit: 2,
    message: "--limit: renamed: the most requests replayed are --num-prompts",
  },
  { command: "capacity", what: "a bracket upside down", args: [...CAP, "--bracket", "10:5"], exit: 2, message: "--bracket" },
  // replay
  {
    command: "replay",
    what: "a trace that does not exist",
    args: ["replay", "{DIR}/none.jsonl", "--block-size", "16", ...RUN],
    exit: 2,
    message: "none.jsonl",
  },
  { command: "replay", what: "a broken trace line", args: ["replay", "{TRACE_BAD}", "--block-size", "16", ...RUN], exit: 2, message: ":2:" },
  { command: "replay", what: "a block size of 0", args: ["replay", "{TRACE_BAD}", "--block-size", "0", ...RUN], exit: 2, message: "--block-size" },
  {
    command: "replay",
    what: "an agentic (WEKA) trace with a missing field",
    args: ["replay", "test/fixtures/agentic/bad/missing-field.jsonl", ...RUN],
    exit: 2,
    message: 'missing-field.jsonl:2: requests[0]: "in" must be an integer',
  },
  {
    command: "replay",
    what: "an agentic trace with a negative delay",
    args: ["replay", "test/fixtures/agentic/bad/negative-delay.jsonl", ...RUN],
    exit: 2,
    message: 'negative-delay.jsonl:2: requests[1]: "think_time" is negative',
  },
  {
    command: "replay",
    what: "an agentic trace with a subagent with no requests",
    args: ["replay", "test/fixtures/agentic/bad/empty-subagent.jsonl", ...RUN],
    exit: 2,
    message: "empty-subagent.jsonl:2: requests[1]: a subagent with no requests",
  },
  {
    command: "replay",
    what: "a trace of an unknown format",
    args: ["replay", "test/fixtures/agentic/bad/unknown-format.txt", ...RUN],
    exit: 2,
    message: "unknown-format.txt:2: unknown trace format",
  },
  {
    command: "replay",
    what: "an agentic trace with a block size of 0",
    args: ["replay", "test/fixtures/agentic/bad/block-size-zero.jsonl", ...RUN],
    exit: 2,
    message: 'block-size-zero.jsonl:2: "block_size" must be an integer >= 1',
  },
  {
    command: "replay",
    // Before the replay's estimate nothing refused this: a million trees of a three-call trace, about 259 GiB by the model.
    what: "agentic sessions that would not fit in memory",
    args: ["replay", "test/fixtures/agentic/trace_0187.json", ...RUN, "--sessions", "1000000"],
    exit: 2,
    message: "--sessions 1000000: 1000000 session trees of test/fixtures/agentic/trace_0187.json's 1 trace(s)",
  },
  {
    command: "replay",
    what: "a Mooncake replay's flag with agentic sessions",
    args: ["replay", "test/fixtures/agentic/trace_0187.json", ...RUN, "--ignore-timestamps", "--max-concurrency", "2"],
    exit: 2,
    message: "--ignore-timestamps: a Mooncake replay's flag; agentic sessions follow their own schedule",
  },
  {
    command: "replay",
    what: "an agentic schedule's flag with a Mooncake trace",
    args: ["replay", "{TRACE_BAD}", "--block-size", "16", ...RUN, "--delay-rule", "think-time"],
    exit: 2,
    message: "--delay-rule: an agentic sessions' flag",
  },
  // report
  { command: "report", what: "an empty file", args: ["report", "{EMPTY}"], exit: 2, message: "holds no results line" },
  { command: "report", what: "a foreign JSON line", args: ["report", "{FOREIGN}"], exit: 2, message: "holds no results line" },
  { command: "report", what: "a file that does not exist", args: ["report", "{DIR}/none.jsonl"], exit: 2, message: "none.jsonl" },
  {
    command: "report",
    what: "a line of a newer schema_version",
    args: ["report", "{FUTURE}"],
    exit: 2,
    message: "{FUTURE} line 1 is invalid (a schema_version this build knows): schema_version: 999 is newer than this build reads (2)",
  },
  // compare
  {
    command: "compare",
    what: "a limit without its percent sign",
    args: ["compare", "{A}", "{B}", "--max-regress", "p99_ttft_ms=10"],
    exit: 2,
    message: "write the percent sign (p99_ttft_ms=10%)",
  },
  {
    command: "compare",
    what: "a metric limited twice",
    args: ["compare", "{A}", "{B}", "--max-regress", "p99_ttft_ms=10%,p99_ttft_ms=90%"],
    exit: 2,
    message: "p99_ttft_ms is named twice",
  },
  {
    command: "compare",
    what: "a metric limited in two --max-regress flags (the last no longer wins silently)",
    args: ["compare", "{A}", "{B}", "--max-regress", "mean_itl_ms=5%", "--max-regress", "mean_itl_ms=10%"],
    exit: 2,
    message: "mean_itl_ms is named twice",
  },
  {
    command: "compare",
    what: "a limit on a metric neither file has",
    args: ["compare", "{A}", "{B}", "--max-regress", "capacity_request_rate=10%"],
    exit: 2,
    message: "capacity_request_rate is not a metric of these files' lines",
  },
  {
    command: "compare",
    what: "an unknown metric in --only",
    args: ["compare", "{A}", "{B}", "--only", "ttft"],
    exit: 2,
    message: "--only ttft: compare knows no metric ttft",
  },
  { command: "compare", what: "one file", args: ["compare", "{A}"], exit: 2, message: "compare: expects two JSONL results files" },
  {
    command: "compare",
    what: "a history that does not exist",
    args: ["compare", "history:last-green", "{A}", "--db", "{DIR}/none.db"],
    exit: 2,
    message: "no history yet",
  },
  {
    command: "compare",
    what: "a NEW whose mean latency is Infinity",
    args: ["compare", "{A}", "{INF}"],
    exit: 2,
    message: "{INF} line 1 is invalid (finite numbers): mean_ttft_ms: Infinity is not a finite number",
  },
  {
    command: "compare",
    what: "a NEW whose mean latency is text",
    args: ["compare", "{A}", "{FAST}"],
    exit: 2,
    message: '{FAST} line 1 is invalid (the published JSON Schema (warmbench schema)): mean_ttft_ms: "fast" is not a number or null',
  },
  {
    command: "compare",
    what: "a NEW with a negative latency",
    args: ["compare", "{A}", "{NEG}"],
    exit: 2,
    message: "{NEG} line 1 is invalid (non-negative counts and latencies): p99_ttft_ms: -1 is negative",
  },
  {
    command: "compare",
    what: "a 0.4 NEW without its evidence block",
    args: ["compare", "{A}", "{NO_EVIDENCE}"],
    exit: 2,
    message: "{NO_EVIDENCE} line 1 is invalid (an evidence block in every line since 0.4): evidence: missing",
  },
  {
    command: "compare",
    what: "a NEW whose evidence holds no sample count",
    args: ["compare", "{A}", "{NO_SAMPLES}"],
    exit: 2,
    message: "{NO_SAMPLES} line 1 is invalid (the published JSON Schema (warmbench schema)): evidence.samples.ttft: missing",
  },
  // merge
  { command: "merge", what: "one file", args: ["merge", "{A}", "-o", "{DIR}/m.jsonl"], exit: 2, message: "merge: expects" },
  { command: "merge", what: "a run twice", args: ["merge", "{A}", "{A}", "-o", "{DIR}/m.jsonl"], exit: 2, message: "would be counted twice" },
  {
    command: "merge",
    what: "a line with a negative count",
    args: ["merge", "{A}", "{MINUS_ONE}", "-o", "{DIR}/m.jsonl"],
    exit: 2,
    message: "{MINUS_ONE} line 1 is invalid (non-negative counts and latencies): completed: -1 is negative",
  },
  // history
  {
    command: "history",
    what: "an unknown action",
    args: ["history", "drop", "--db", "{DIR}/h.db"],
    exit: 2,
    message: "history: expects add FILES..., list, show [METRIC] or promote RUN_ID",
  },
  {
    command: "history",
    what: "promoting a run it does not hold",
    args: ["history", "promote", "nope", "--db", "{DIR}/h.db"],
    exit: 2,
    message: "history promote: no run nope",
  },
  {
    command: "history",
    what: "adding a file with an invalid line (nothing is stored)",
    args: ["history", "add", "{A}", "{INF}", "--db", "{DIR}/h.db"],
    exit: 2,
    message: "{INF} line 1 is invalid (finite numbers): mean_ttft_ms",
  },
  {
    command: "history",
    what: "listing a history whose table was dropped",
    args: ["history", "list", "--db", "{DB_DROPPED}"],
    exit: 2,
    message: `--db {DB_DROPPED}: ${DROPPED}`,
  },
  {
    command: "history",
    what: "adding to a history whose table was dropped",
    args: ["history", "add", "{B}", "--db", "{DB_DROPPED}"],
    exit: 2,
    message: `--db {DB_DROPPED}: ${DROPPED}`,
  },
  {
    command: "compare",
    what: "a baseline from a history whose table was dropped",
    args: ["compare", "history:last-green", "{B}", "--db", "{DB_DROPPED}"],
    exit: 2,
    message: `--db {DB_DROPPED}: ${DROPPED}`,
  },
  {
    command: "run",
    what: "run --history into a history whose table was dropped",
    args: [...RUN, "--history", "--db", "{DB_DROPPED}"],
    exit: 2,
    message: `--db {DB_DROPPED}: ${DROPPED}`,
  },
  // passport
  {
    command: "passport",
    what: "an --output-file that takes no byte (/dev/full)",
    args: ["passport", "--model", "{TOK}", "--base-url", "{MOCK}", "--output-file", "/dev/full"],
    exit: 2,
    message: "--output-file: cannot write /dev/full: ENOSPC",
  },
  // mock
  {
    command: "mock",
    what: "a tokenizer that does not exist",
    args: ["mock", "--tokenizer", "/nonexistent.json"],
    exit: 2,
    message: "--tokenizer /nonexistent.json: no such file",
  },
  { command: "mock", what: "a host that is no address", args: ["mock", "--host", "999.1.1.1"], exit: 2, message: "--host 999.1.1.1: not an IP address" },
  { command: "mock", what: "a directory as the truth file", args: ["mock", "--truth", "{DIR}"], exit: 2, message: "a directory; give a file to append to" },
  {
    command: "mock",
    what: "a JSON file that is no tokenizer",
    args: ["mock", "--tokenizer", "{FOREIGN}"],
    exit: 2,
    message: "--tokenizer {FOREIGN}: not a tokenizer.json the mock can load",
  },
];
