/**
 * The flag tables of each command, built from the defaults in options.ts, and the strict check that citty lacks
 * (it silently accepts unknown flags) - with argparse's unambiguous abbreviations, so every command line the
 * script accepts, warmbench accepts too (`--num-p 8` is `--num-prompts 8`).
 */
import type { ArgsDef } from "citty";
import { COMPARE_DEFAULTS, DEMO_DEFAULTS, MULTITURN_DEFAULTS, READY_QUEUE_POLICIES, RUN_DEFAULTS } from "../config/options.ts";
import { UsageError } from "../errors.ts";

const s = (description: string, dflt?: string | number | null): ArgsDef[string] => ({
  type: "string",
  description: dflt === undefined || dflt === null ? description : `${description} (default: ${dflt})`,
});
const b = (description: string): ArgsDef[string] => ({ type: "boolean", description });

const d = RUN_DEFAULTS;

/** Where `history` and `compare history:...` keep runs without --db. */
export const HISTORY_DEFAULT_DB = "warmbench.db";

/** The server the sweep talks to: `run` only (the demo brings its own). */
const SERVER_ARGS: ArgsDef = {
  "base-url": s("Server base URL if not using --host and --port"),
  host: s("Server host", d.host),
  port: s("Server port", d.port),
};

/** The workload's flags, with the defaults of `run` or of the demo. */
function workloadArgs(w: { numPrompts: number; totalTokens: number; outputLen: number; maxConcurrency: number; pcts: string }): ArgsDef {
  return {
    "num-prompts": s("Prompts per shared-prefix percentage", w.numPrompts),
    "total-tokens": s("Input tokens per request (shared prefix + unique suffix)", w.totalTokens),
    "output-len": s("Output tokens per request", w.outputLen),
    "max-concurrency": s("Maximum concurrent requests; 0 = all prompts at once", w.maxConcurrency),
    pcts: s("Comma-separated shared-prefix percentages to sweep", w.pcts),
    "request-rate": s("Requests per second, or a comma list to sweep (one line per pct and rate); inf = next request when a slot is free", d.requestRate),
    burstiness: s("Gamma shape of the gaps between arrivals: 1 = Poisson, larger = more regular, inf = evenly spaced", d.burstiness),
    duration: s("Open loop: seconds during which requests arrive at the rate (instead of --num-prompts)"),
  };
}

/** A process of a run that a launcher (srun, a Kubernetes Indexed Job, a script) started: `run` and `multiturn`. */
const LAUNCHER_ARGS: ArgsDef = {
  shard: s("This process's part of a run started by a launcher: I/N, or auto under Slurm's srun (needs $WARMBENCH_SHARD_TOKEN across nodes)"),
  coordinator: s("HOST:PORT where shard 0 listens (--shard I/N; under Slurm derived from the job and step ids)"),
};

/** Everything else `run` and `demo` share. */
const COMMON_ARGS: ArgsDef = {
  seed: s("Random seed for prompt generation (Python random.Random compatible)", d.seed),
  "disable-ignore-eos": b("Let requests stop at EOS (ignore_eos=false)"),
  "output-file": s("JSONL file to append one result object per shared-prefix percentage"),
  "extra-request-body": s("JSON object merged into every request payload"),
  "dump-prompts": s("Write every prompt's token ids, one JSON line per prompt, to this file"),
  "flush-deadline": s("Seconds to keep retrying a busy /flush_cache", d.flushDeadlineS),
  "request-timeout": s("Seconds one request may take in all", d.requestTimeoutS),
  "stall-timeout": s("Seconds without any byte before a request fails as stalled", d.stallTimeoutS),
  flush: s("Cache flush before each pct: auto (the backend's way) or none", d.flush),
  "verify-cache": s("Check cached tokens against the expected prefix: off, warn or strict (exit 4)", d.verifyCache),
  "cache-tolerance": s("Fraction of requests per pct that may disagree under --verify-cache strict", d.cacheTolerance),
  "request-details": s("Write one JSONL line per measured request (timestamps, cached tokens) to this file"),
  strict: b("Exit 5 when the client itself was saturated (event-loop lag or JS-thread CPU) during a pct"),
  workers: s("Processes on this machine sharing the load (this one included), or auto: one per 256 streams, up to cores-1"),
  gate: s("Pass/fail threshold METRIC OP VALUE[@pct OP N], e.g. 'p99_ttft_ms<=800@pct>=90'; repeatable; exit 6 when one fails"),
  "gates-file": s("File with one gate per line (# comments)"),
  quiet: b("No progress line on stderr"),
  verbose: b("Show stack traces and debug logs"),
};

/** Flags that may be given more than once: their values reach the parser joined by newlines. */
export const REPEATABLE_FLAGS: ReadonlySet<string> = new Set(["gate"]);

/** Flags of `warmbench run`: the reference script's flags, same names and defaults, then ours. */
export const RUN_ARGS: ArgsDef = {
  backend: s("auto (ask the server), sglang (native /generate), vllm, llamacpp or openai (/v1/completions)", d.backend),
  endpoint: s("auto (the engine's own: /generate for SGLang, else /v1/completions), generate, completions, or chat (/v1/chat/completions, text prompts)", d.endpoint),
  ...SERVER_ARGS,
  model: s("Model name or path; loads the tokenizer unless --tokenizer is given (required)"),
  tokenizer: s("tokenizer.json file, a directory holding one, or a Hugging Face repo id (default: --model)"),
  ...workloadArgs({ ...d, pcts: d.pcts }),
  ...COMMON_ARGS,
  revision: s("Hugging Face revision for a repo-id tokenizer", d.revision),
  settle: s("Seconds to wait after each cache flush", d.settleMs / 1000),
  "page-size": s("Server KV page size for the expected cached tokens (default: /server_info's, else 1 for sglang and llamacpp, 16 for openai/vllm)"),
  "api-key": s("Bearer token for the server (else $SGLANG_API_KEY / $OPENAI_API_KEY); never printed"),
  "served-model-name": s("Model name for the OpenAI backend (default: the first of /v1/models)"),
  ...LAUNCHER_ARGS,
  "working-set": s("Distinct shared prefixes in rotation per pct (cache pressure); a list, e.g. 1,4,16, sweeps them", d.workingSet),
  history: b("Add the run to the history database (--db) when it ends; an interrupted run adds nothing"),
  db: s("The history database of --history (SQLite)", `./${HISTORY_DEFAULT_DB}`),
};

const md = MULTITURN_DEFAULTS;

/**
 * Flags of `warmbench multiturn`: conversations of --num-clients clients x --num-rounds turns (names as SGLang's
 * bench_multiturn.py), then the sweep's flags where they mean the same.
 */
export const MULTITURN_ARGS: ArgsDef = {
  backend: s("sglang (native /generate, token ids from output_ids), or openai / vllm (/v1/completions, output re-tokenized)", d.backend),
  ...SERVER_ARGS,
  model: s("Model name or path; loads the tokenizer unless --tokenizer is given (required)"),
  tokenizer: s("tokenizer.json file, a directory holding one, or a Hugging Face repo id (default: --model)"),
  "num-clients": s("Conversations run side by side", md.numClients),
  "num-rounds": s("Turns per conversation", md.numRounds),
  "turn-tokens": s("New user tokens in every turn (bench_multiturn's sub-question-input-length)", md.turnTokens),
  "first-turn-tokens": s("New user tokens of the first turn (bench_multiturn's request-length; default: --turn-tokens)"),
  "shared-system-tokens": s("A system prompt every conversation starts with (warmed before round 0)", md.sharedSystemTokens),
  "output-len": s("Output tokens per turn", md.outputLen),
  "max-concurrency": s("Turns in flight at once (bench_multiturn's max-parallel); 0 = every client", md.maxConcurrency),
  "round-barrier": b("Hold round r until every client finished round r-1 (bench_multiturn's --enable-round-barrier)"),
  "think-time": s("Seconds a client waits between its turns: 0.5, exp:MEAN or uniform:LOW:HIGH", md.thinkTime),
  "ready-queue-policy": s(`Which ready client goes next: ${READY_QUEUE_POLICIES.join(", ")}`, md.readyQueuePolicy),
  "working-set": s("Distinct system prompts (client c uses c mod K): cache pressure", md.workingSet),
  ...COMMON_ARGS,
  flush: s("Cache flush before round 0: auto (the backend's way) or none", d.flush),
  "cache-tolerance": s("Fraction of a round's turns that may disagree under --verify-cache strict", d.cacheTolerance),
  strict: b("Exit 5 when the client itself was saturated (event-loop lag or JS-thread CPU) during a round"),
  "output-file": s("JSONL file to append one line per round"),
  "dump-prompts": s("Write every turn's token ids, one JSON line per turn, to this file"),
  "request-details": s("Write one JSONL line per turn (timestamps, cached tokens per tier) to this file"),
  revision: s("Hugging Face revision for a repo-id tokenizer", d.revision),
  settle: s("Seconds to wait after the cache flush", d.settleMs / 1000),
  "page-size": s("Server KV page size for the expected cached tokens (default: /server_info's, else 1 for sglang and 16 for openai/vllm)"),
  "api-key": s("Bearer token for the server (else $SGLANG_API_KEY / $OPENAI_API_KEY); never printed"),
  "served-model-name": s("Model name for the OpenAI backend (default: the first of /v1/models)"),
  workers: s("Processes on this machine sharing the conversations (this one included; client c runs in process c mod N), or auto"),
  ...LAUNCHER_ARGS,
  gate: s("Pass/fail threshold METRIC OP VALUE judged on every round line, e.g. 'p99_ttft_ms<=800'; repeatable; exit 6 when one fails"),
};

const dd = DEMO_DEFAULTS;

/** Flags of `warmbench demo`: the sweep's flags with the demo's defaults; the server and tokenizer are its own. */
export const DEMO_ARGS: ArgsDef = {
  backend: s("auto (the demo's mock answers as SGLang), sglang, vllm or openai (/v1/completions)", d.backend),
  endpoint: s("auto, generate, completions or chat (/v1/chat/completions, text prompts)", d.endpoint),
  model: s("Tokenizer for the prompts (default: the bundled Qwen3 tokenizer)"),
  ...workloadArgs(dd),
  ...COMMON_ARGS,
  settle: s("Seconds to wait after each cache flush", dd.settleS),
};

/** Flags of `warmbench merge`. */
export const MERGE_ARGS: ArgsDef = {
  files: { type: "positional", description: "JSONL files of runs that were not coordinated (two or more)", required: true },
  output: s("Where the merged JSONL goes (-o)"),
};

/** Flags of `warmbench report`. */
export const REPORT_ARGS: ArgsDef = {
  files: { type: "positional", description: "JSONL files written with --output-file (one or more)", required: true },
  html: s("Write one self-contained HTML report of every run to this file"),
  md: s("Write the report's tables as Markdown to this file (- for stdout)"),
};

/** Flags of `warmbench compare`. */
export const COMPARE_ARGS: ArgsDef = {
  base: { type: "positional", description: "JSONL results of the baseline", required: true },
  new: { type: "positional", description: "JSONL results to judge against it", required: true },
  "max-regress": s("How much worse NEW may be, per metric, as METRIC=PCT%,...; replaces the defaults (with repeats on both sides, p99_itl_ms=10% too)", COMPARE_DEFAULTS.maxRegress),
  md: s("Also write the comparison as Markdown to this file"),
  force: b("Compare lines whose workload fingerprints differ (marked in the output)"),
  "allow-missing": b("Accept lines of BASE that NEW lacks (said in the output) instead of failing with exit 7"),
  db: s("The history database that a BASE of history:last-green, history:TAG or history:RUN_ID is read from", `./${HISTORY_DEFAULT_DB}`),
  "fail-inconclusive": b("Exit 7 also when a repeated line's confidence interval straddles a limit (inconclusive)"),
  verbose: b("Show stack traces and debug logs"),
};

/** Flags of `warmbench history`. */
export const HISTORY_ARGS: ArgsDef = {
  action: { type: "positional", description: "add FILES..., list, or show [METRIC] (a trend table)", required: true },
  db: s("The history database (SQLite; created by add)", `./${HISTORY_DEFAULT_DB}`),
  tag: s("add: a tag for the runs (e.g. a release); list, show: only runs with this tag"),
  pct: s("show: only the lines at this shared-prefix pct"),
  verbose: b("Show stack traces and debug logs"),
};

/**
 * Checks every flag against `defs` and returns argv with abbreviations expanded (argparse accepts any unambiguous
 * prefix of a long option; an exact name always wins). Rejects unknown or ambiguous flags and stray positional
 * arguments, naming the first culprit. Accepts --flag value, --flag=value, and --no-flag for booleans.
 */
export function normalizeFlags(argv: string[], defs: ArgsDef, opts: { variadic?: boolean } = {}): string[] {
  const positionals = opts.variadic ? Infinity : Object.values(defs).filter((a) => a.type === "positional").length;
  const names = Object.keys(defs).filter((n) => defs[n]!.type !== "positional");
  const out: string[] = [];
  const repeated = new Map<string, string[]>();
  let tail: string[] = [];
  let seenPositionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      tail = argv.slice(i);
      break;
    }
    if (!arg.startsWith("-") || /^-\d/.test(arg)) {
      if (++seenPositionals > positionals) throw new UsageError(`unexpected argument "${arg}"`);
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const given = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^-{1,2}/, "");
    const name = resolveName(given, names, defs, arg);
    const def = defs[name.startsWith("no-") && !defs[name] ? name.slice(3) : name]!;
    const value = eq < 0 ? undefined : arg.slice(eq + 1);
    if (def.type === "boolean") {
      if (value !== undefined) throw new UsageError(`--${name} takes no value`);
      out.push(`--${name}`);
      continue;
    }
    const flagValue = value ?? argv[i + 1];
    if (flagValue === undefined) throw new UsageError(`--${name}: expects a value`);
    if (REPEATABLE_FLAGS.has(name)) repeated.set(name, [...(repeated.get(name) ?? []), flagValue]);
    else if (value !== undefined) out.push(`--${name}=${value}`);
    else out.push(`--${name}`, flagValue);
    if (value === undefined) i++;
  }
  for (const [name, values] of repeated) out.push(`--${name}=${values.join("\n")}`);
  return [...out, ...tail];
}

/** The full flag name for `given`: exact, --no-<boolean>, or the one flag it abbreviates. */
function resolveName(given: string, names: string[], defs: ArgsDef, arg: string): string {
  if (defs[given] && defs[given]!.type !== "positional") return given;
  if (given.startsWith("no-") && defs[given.slice(3)]?.type === "boolean") return given;
  const flag = arg.split("=")[0];
  const matches = given.length > 0 ? names.filter((n) => n.startsWith(given)) : [];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new UsageError(`ambiguous flag "${flag}" could match ${matches.map((m) => `--${m}`).join(", ")}`);
  }
  throw new UsageError(`unknown flag "${flag}" (see --help)`);
}
