/**
 * The before/after output guard (issue 18, item 6): small deterministic runs of the compiled binary against the
 * binary's own mock, whose JSONL was recorded before the layer refactor (test/fixtures/golden/, written by
 * test/fixtures/golden/record.ts). The same commands rerun with the current binary must give the same lines, key by
 * key: same keys, same types, same values for everything the mock makes exact; timings only typed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess } from "./mock-process.ts";
import { LLAMA2_TOKENIZER, runCli } from "./run-cli.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
export const GOLDEN_DIR = join(import.meta.dir, "..", "fixtures", "golden");

/** One recorded run: the mock's flags, then the client's (the mock's URL, the tokenizer and the files are added). */
export interface GoldenRun {
  name: string;
  mock: string[];
  cli: string[];
}

// Fast mock timings: the values compared do not depend on them, only the run time does.
const FAST = ["--ttft-base-ms", "1", "--prefill-us-per-token", "5", "--itl-ms", "1"];
const SWEEP = ["--num-prompts", "6", "--total-tokens", "400", "--output-len", "4", "--max-concurrency", "2", "--settle", "0", "--seed", "11"];

export const GOLDEN_RUNS: GoldenRun[] = [
  { name: "sweep-sglang", mock: [...FAST, "--page-size", "16"], cli: [...SWEEP, "--backend", "sglang", "--pcts", "0,50,90"] },
  { name: "sweep-vllm", mock: [...FAST, "--personality", "vllm", "--page-size", "16"], cli: [...SWEEP, "--backend", "vllm", "--pcts", "0,50,90"] },
  { name: "sweep-openai", mock: [...FAST, "--personality", "openai"], cli: [...SWEEP, "--backend", "openai", "--flush", "none", "--pcts", "0"] },
  { name: "sweep-llamacpp", mock: [...FAST, "--personality", "llamacpp", "--slots", "2"], cli: [...SWEEP, "--backend", "llamacpp", "--pcts", "0,50,90"] },
  // Open loop: a burstiness of inf spaces arrivals evenly, so nothing drawn depends on timing.
  { name: "rates", mock: [...FAST, "--page-size", "16"], cli: [...SWEEP, "--pcts", "50", "--request-rate", "200,inf", "--burstiness", "inf"] },
  {
    name: "working-set",
    mock: [...FAST, "--page-size", "16", "--cache-tokens", "2000"],
    cli: [...SWEEP, "--max-concurrency", "1", "--pcts", "90", "--working-set", "2,8"],
  },
  {
    name: "multiturn",
    mock: [...FAST, "--page-size", "16"],
    cli: [
      "multiturn",
      "--num-clients",
      "2",
      "--num-rounds",
      "3",
      "--shared-system-tokens",
      "32",
      "--turn-tokens",
      "48",
      "--output-len",
      "4",
      "--settle",
      "0",
      "--seed",
      "5",
    ],
  },
];

/** Runs one golden run with the current dist/warmbench: its results file (throws on a non-zero exit). */
export async function runGolden(run: GoldenRun): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `warmbench-golden-${run.name}-`));
  const out = join(dir, "out.jsonl");
  const mock = await startMockProcess(run.mock);
  try {
    const [first, ...rest] = run.cli[0] === "multiturn" ? run.cli : ["", ...run.cli];
    const command = first ? [first] : [];
    const r = await runCli([...command, "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--output-file", out, ...rest]);
    if (r.code !== 0) throw new Error(`${run.name}: exit ${r.code}\n${r.stderr}`);
    // The tokenizer's path names the checkout: recorded as <repo> so the files hold in any clone.
    writeFileSync(out, readFileSync(out, "utf8").replaceAll(REPO_ROOT, "<repo>"));
    return out;
  } finally {
    await mock.stop();
  }
}

/** Keys added on purpose since the recording (at any depth): present in the new lines only. */
export const ADDED_KEYS = new Set<string>([
  "schema_version",
  // The run's options echo (issue 37, 39): the limits read from a server (--sse-line-max-mib, --control-body-max-mib)
  // and warmbench's own Prometheus exposition (--serve-metrics), echoed as every option is.
  "max_sse_line_bytes",
  "max_control_body_bytes",
  "serve_metrics",
  // --keep-going (issue 37): a failed output file stops the points still to measure unless it is given.
  "keep_going",
  // Round lines (issue 17 item 2): the gates' verdicts and the shards report, as pct lines have them; the multiturn
  // options' echo of --gate, --workers, --shard and --coordinator, which multiturn now takes.
  "gates",
  "shards",
  "workers",
  "shard",
  "coordinator",
  // Every line over time (issue 19 item 2): its buckets and its steady-state window.
  "timeline",
  "steady_state",
  // Evidence on every line (issue 25): what every verdict asks of a line.
  "evidence",
  // One line builder (issue 26): the round line carries the client's own lag its client_saturated is computed from.
  "client_own_lag_p99_ms",
  // Hardening (issue 27): --base-url's userinfo is kept apart from the URL, echoed as "(set)" or null.
  "url_credentials",
  // One cache model (issue 35): the options' echo of how the server caches (--server-cache) and where a routed
  // line's prefixes were warmed (--warm-replicas).
  "server_cache",
  "warm_replicas",
  // No request lost to a stale connection (issue 37): requests sent once more on a fresh connection.
  "retried_connections",
  // Agentic sessions (issue 38): the agentic line's key, and replay's options echo of the trace format and the
  // schedule's rules (--trace-format, --delay-rule, --spawn-rule, --join-rule, --max-idle, --sessions, --start-at).
  "agentic",
  "trace_format",
  "delay",
  "spawn",
  "join",
  "max_idle_s",
  "sessions",
  "start_at",
  // Server telemetry (issue 39): --scrape-interval is 1s by default and the mock serves /metrics, so every golden
  // line over a mock carries the scrapes' series, summaries and reconciliation, the evidence block their count
  // (samples.telemetry), and the options' echo the two flags.
  "server_telemetry",
  "server_kv_usage_peak",
  "server_queue_mean",
  "server_preemptions_per_request",
  "server_reconciliation",
  "server_counters_disagree",
  "telemetry",
  "scrape_interval_ms",
  "scrape_all",
]);

/**
 * Values that changed on purpose, by run, each exactly as goldenDiff reports it (the test fails if one of them no
 * longer happens, so the list cannot go stale).
 */
export const CHANGED_ON_PURPOSE: Record<string, { changes: string[]; why: string }> = {
  "working-set": {
    // One cache model (issue 35): the second line's working set does not fit the mock's cache, which evicts as LRU
    // should; the model now expects those misses, so a correct server is no longer called a mismatch.
    changes: ["[1].cached_tokens_mismatched: 6 became 0", '[1].cache_check: "mismatch" became "ok"'],
    why: "the cache check reads the cache model's range (issue 35)",
  },
};

/** The run's identity: which build (versions.test.ts pins it), where the servers listened, when, which files; typed only, at any depth. */
const IDENTITY = /^(warmbench_version|started_at|run_id|base_url|output_file|port|startup_time|evidence)$/;
/** Echoes of the flags (the client's and the mock's): exact but for the identity keys, whatever their names. */
const CONFIG_TREES = new Set(["options", "mock"]);
/** Measured on the clock (latencies, rates, CPU, fits of TTFT): typed only. */
const TIMING =
  /^(achieved_|client_)|(_ms|_us|_cpu_pct|duration|throughput|throughput_retokenized)$|^(concurrency|c_uncached_ttft|r2|saved_us_per_cached_token|prefill_us_per_token)$/;
/** Subtrees of timings only (the HDR histograms' buckets). */
const TIMING_TREES = new Set(["hdr"]);

type Mode = "exact" | "config" | "typed";

function modeOf(key: string, parent: Mode): Mode {
  if (parent === "typed" || IDENTITY.test(key)) return "typed";
  if (parent === "config") return "config";
  if (CONFIG_TREES.has(key)) return "config";
  if (TIMING_TREES.has(key) || (TIMING.test(key) && key !== "max_concurrency")) return "typed";
  return "exact";
}

const kind = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Every difference between a recorded line and a new one, as `path: what`; [] when they agree. */
export function goldenDiff(before: unknown, after: unknown, path = "", mode: Mode = "exact"): string[] {
  if (kind(before) !== kind(after)) return [`${path || "."}: ${kind(before)} became ${kind(after)}`];
  if (Array.isArray(before) && Array.isArray(after)) {
    if (mode === "typed") return before.length && after.length ? goldenDiff(before[0], after[0], `${path}[0]`, mode) : [];
    if (before.length !== after.length) return [`${path}: length ${before.length} became ${after.length}`];
    return before.flatMap((b, i) => goldenDiff(b, after[i], `${path}[${i}]`, mode));
  }
  if (kind(before) === "object") {
    const b = before as Record<string, unknown>;
    const a = after as Record<string, unknown>;
    const problems: string[] = [];
    for (const k of Object.keys(b)) if (!(k in a)) problems.push(`${path}.${k}: missing`);
    for (const k of Object.keys(a)) if (!(k in b) && !ADDED_KEYS.has(k)) problems.push(`${path}.${k}: new key (list it in ADDED_KEYS if on purpose)`);
    for (const k of Object.keys(b)) {
      if (!(k in a)) continue;
      problems.push(...goldenDiff(b[k], a[k], `${path}.${k}`, modeOf(k, mode)));
    }
    return problems;
  }
  if (mode === "typed" || before === after) return [];
  return [`${path}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`];
}
