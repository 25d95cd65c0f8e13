/**
 * The flag tables of each command, built from the defaults in options.ts, and the strict check that citty
 * lacks (it silently accepts unknown flags).
 */
import type { ArgsDef } from "citty";
import { RUN_DEFAULTS } from "./options.ts";
import { UsageError } from "./errors.ts";

const s = (description: string, dflt?: string | number | null): ArgsDef[string] => ({
  type: "string",
  description: dflt === undefined || dflt === null ? description : `${description} (default: ${dflt})`,
});
const b = (description: string): ArgsDef[string] => ({ type: "boolean", description });

const d = RUN_DEFAULTS;

/** Flags of `warmbench run`: the reference script's flags, same names and defaults, then ours. */
export const RUN_ARGS: ArgsDef = {
  backend: s("sglang (native /generate), or openai / vllm (/v1/completions)", d.backend),
  "base-url": s("Server base URL if not using --host and --port"),
  host: s("Server host", d.host),
  port: s("Server port", d.port),
  model: s("Model name or path; loads the tokenizer unless --tokenizer is given (required)"),
  tokenizer: s("tokenizer.json file, a directory holding one, or a Hugging Face repo id (default: --model)"),
  "num-prompts": s("Prompts per shared-prefix percentage", d.numPrompts),
  "total-tokens": s("Input tokens per request (shared prefix + unique suffix)", d.totalTokens),
  "output-len": s("Output tokens per request", d.outputLen),
  "max-concurrency": s("Maximum concurrent requests", d.maxConcurrency),
  pcts: s("Comma-separated shared-prefix percentages to sweep", d.pcts),
  seed: s("Random seed for prompt generation (Python random.Random compatible)", d.seed),
  "disable-ignore-eos": b("Let requests stop at EOS (ignore_eos=false)"),
  "output-file": s("JSONL file to append one result object per shared-prefix percentage"),
  "extra-request-body": s("JSON object merged into every request payload"),
  "dump-prompts": s("Write every prompt's token ids, one JSON line per prompt, to this file"),
  revision: s("Hugging Face revision for a repo-id tokenizer", d.revision),
  settle: s("Seconds to wait after each cache flush", d.settleMs / 1000),
  "flush-deadline": s("Seconds to keep retrying a busy /flush_cache", d.flushDeadlineS),
  "request-timeout": s("Seconds one request may take in all", d.requestTimeoutS),
  "stall-timeout": s("Seconds without any byte before a request fails as stalled", d.stallTimeoutS),
  "page-size": s("Server KV page size for the expected cached tokens (default: from /server_info, else 1)"),
  "api-key": s("Bearer token for the server (else $SGLANG_API_KEY / $OPENAI_API_KEY); never printed"),
  "served-model-name": s("Model name for the OpenAI backend (default: the first of /v1/models)"),
  flush: s("Cache flush before each pct: auto (the backend's way) or none", d.flush),
  "verify-cache": s("Check cached tokens against the expected prefix: off, warn or strict (exit 4)", d.verifyCache),
  "cache-tolerance": s("Fraction of requests per pct that may disagree under --verify-cache strict", d.cacheTolerance),
  "request-details": s("Write one JSONL line per measured request (timestamps, cached tokens) to this file"),
  strict: b("Exit 5 when the client itself was saturated (event-loop lag or CPU) during a pct"),
  verbose: b("Show stack traces and debug logs"),
};

/** Flags of `warmbench report`. */
export const REPORT_ARGS: ArgsDef = {
  file: { type: "positional", description: "JSONL file written with --output-file", required: true },
};

/**
 * Rejects flags the command does not define and stray positional arguments, naming the first culprit.
 * Accepts --flag value, --flag=value, and --no-flag for booleans.
 */
export function checkKnownFlags(argv: string[], defs: ArgsDef): void {
  const positionals = Object.values(defs).filter((a) => a.type === "positional").length;
  let seenPositionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") break;
    if (!arg.startsWith("-") || /^-\d/.test(arg)) {
      if (++seenPositionals > positionals) throw new UsageError(`unexpected argument "${arg}"`);
      continue;
    }
    const name = arg.replace(/^-{1,2}/, "").split("=")[0] as string;
    const def = defs[name];
    const negated = name.startsWith("no-") ? defs[name.slice(3)] : undefined;
    if (negated?.type === "boolean") continue;
    if (!def || def.type === "positional") throw new UsageError(`unknown flag "${arg.split("=")[0]}" (see --help)`);
    if (def.type === "boolean") {
      if (arg.includes("=")) throw new UsageError(`--${name} takes no value`);
      continue;
    }
    if (!arg.includes("=")) {
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`--${name}: expects a value`);
      i++;
    }
  }
}
