/**
 * The flag tables of each command, built from the defaults in options.ts, and the strict check that citty lacks
 * (it silently accepts unknown flags) - with argparse's unambiguous abbreviations, so every command line the
 * script accepts, warmbench accepts too (`--num-p 8` is `--num-prompts 8`).
 */
import type { ArgsDef } from "citty";
import { DEMO_DEFAULTS, RUN_DEFAULTS } from "./options.ts";
import { UsageError } from "./errors.ts";

const s = (description: string, dflt?: string | number | null): ArgsDef[string] => ({
  type: "string",
  description: dflt === undefined || dflt === null ? description : `${description} (default: ${dflt})`,
});
const b = (description: string): ArgsDef[string] => ({ type: "boolean", description });

const d = RUN_DEFAULTS;

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
  verbose: b("Show stack traces and debug logs"),
};

/** Flags of `warmbench run`: the reference script's flags, same names and defaults, then ours. */
export const RUN_ARGS: ArgsDef = {
  backend: s("sglang (native /generate), or openai / vllm (/v1/completions)", d.backend),
  ...SERVER_ARGS,
  model: s("Model name or path; loads the tokenizer unless --tokenizer is given (required)"),
  tokenizer: s("tokenizer.json file, a directory holding one, or a Hugging Face repo id (default: --model)"),
  ...workloadArgs({ ...d, pcts: d.pcts }),
  ...COMMON_ARGS,
  revision: s("Hugging Face revision for a repo-id tokenizer", d.revision),
  settle: s("Seconds to wait after each cache flush", d.settleMs / 1000),
  "page-size": s("Server KV page size for the expected cached tokens (default: /server_info's, else 1 for sglang and 16 for openai/vllm)"),
  "api-key": s("Bearer token for the server (else $SGLANG_API_KEY / $OPENAI_API_KEY); never printed"),
  "served-model-name": s("Model name for the OpenAI backend (default: the first of /v1/models)"),
};

const dd = DEMO_DEFAULTS;

/** Flags of `warmbench demo`: the sweep's flags with the demo's defaults; the server and tokenizer are its own. */
export const DEMO_ARGS: ArgsDef = {
  backend: s("sglang (native /generate), or openai / vllm (/v1/completions)", d.backend),
  model: s("Tokenizer for the prompts (default: the bundled Qwen3 tokenizer)"),
  ...workloadArgs(dd),
  ...COMMON_ARGS,
  settle: s("Seconds to wait after each cache flush", dd.settleS),
};

/** Flags of `warmbench report`. */
export const REPORT_ARGS: ArgsDef = {
  file: { type: "positional", description: "JSONL file written with --output-file", required: true },
};

/**
 * Checks every flag against `defs` and returns argv with abbreviations expanded (argparse accepts any unambiguous
 * prefix of a long option; an exact name always wins). Rejects unknown or ambiguous flags and stray positional
 * arguments, naming the first culprit. Accepts --flag value, --flag=value, and --no-flag for booleans.
 */
export function normalizeFlags(argv: string[], defs: ArgsDef): string[] {
  const positionals = Object.values(defs).filter((a) => a.type === "positional").length;
  const names = Object.keys(defs).filter((n) => defs[n]!.type !== "positional");
  const out: string[] = [];
  let seenPositionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      out.push(...argv.slice(i));
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
    if (value !== undefined) {
      out.push(`--${name}=${value}`);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined) throw new UsageError(`--${name}: expects a value`);
    out.push(`--${name}`, next);
    i++;
  }
  return out;
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
