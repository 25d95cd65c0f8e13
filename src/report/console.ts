/**
 * The console report: the reference script's per-pct header and print_benchmark_result block, byte for
 * byte (so existing log scrapers keep working), plus our prefix-cache and failure sections. Pure functions
 * returning strings; the caller writes them to stdout.
 */
import type { ErrorEntry } from "../schema/nested.ts";
import type { StoredSweepLine, SweepLine } from "../metrics/sweep-line.ts";
import type { TtftModel } from "../metrics/ttft-model.ts";
import { readResults, type RunLines } from "./results-file.ts";
import { renderSweepSummary, verdictText } from "./sweep-table.ts";
import { formatCell } from "./text-table.ts";

/** Error entries listed under "Failures" (the JSONL keeps more). */
const MAX_CONSOLE_ERRORS = 5;
/** Message length in the console, as the script's `output.error[:160]`. */
const MAX_CONSOLE_MESSAGE_CHARS = 160;

/** `"{:<N}".format(s)`: left-aligned, padded with spaces, never truncated. */
export function padLeftAligned(s: string, width: number): string {
  return s.length >= width ? s : s + " ".repeat(width - s.length);
}

/** `"{s:{c}^{n}}".format(...)`: centered; Python puts the odd pad character on the right. */
export function centerPython(s: string, width: number, fill: string): string {
  const pad = width - s.length;
  if (pad <= 0) return s;
  const left = Math.floor(pad / 2);
  return fill.repeat(left) + s + fill.repeat(pad - left);
}

/** `"{:.2f}".format(x)`: round half to even on the exact binary value, "inf"/"nan", never an exponent. */
export function formatFixed2(x: number): string {
  if (Number.isNaN(x)) return "nan";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const abs = Math.abs(x);
  if (abs === Infinity) return `${sign}inf`;
  // Floats this large are integers, and toFixed would switch to exponent notation.
  if (abs >= 1e21) return `${sign}${BigInt(abs).toString()}.00`;
  let text = abs.toFixed(2);
  // toFixed breaks exact ties upward, Python to even. The only binary values exactly halfway between
  // two cents have a fractional part of 1/8, 3/8, 5/8 or 7/8; then step down one cent from an odd result.
  const eighths = abs * 8;
  if (Number.isInteger(eighths) && eighths % 2 === 1 && Number(text.at(-1)) % 2 === 1) {
    const cents = (BigInt(text.replace(".", "")) - 1n).toString().padStart(3, "0");
    text = `${cents.slice(0, -2)}.${cents.slice(-2)}`;
  }
  return sign + text;
}

/** Python's str() of a float for the values we print ("inf", integral floats as "4.0"). */
export function formatPythonFloat(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${Object.is(x, -0) ? "-" : ""}${Math.abs(x)}.0`;
  return String(x);
}

/** `"{:<40} {:<10}".format(label, value)`. */
const row = (label: string, value: string): string => `${padLeftAligned(label, 40)} ${padLeftAligned(value, 10)}`;
/** `"{:<40} {:<10.2f}".format(label, value)`. */
/** A value with no sample (null) reads "n/a": the script would print 0.00 there. */
const rowFixed2 = (label: string, value: number | null): string => row(label, value === null ? "n/a" : formatFixed2(value));
const section = (title: string): string => centerPython(title, 50, "-");

/** The fields the per-pct banner needs, known before the pct is measured. */
export type LineHeaderFields = Pick<SweepLine, "shared_prefix_pct" | "prefix_len" | "suffix_len"> & Partial<Pick<SweepLine, "working_set">>;

/** The script's per-pct banner, printed before flushing and warming; a working set of several prefixes is named. */
export function renderLineHeader(r: LineHeaderFields): string {
  const bar = "=".repeat(70);
  const total = r.prefix_len + r.suffix_len;
  const ws = r.working_set !== undefined && r.working_set > 1 ? `  working_set=${r.working_set}` : "";
  const line = `shared_prefix=${r.shared_prefix_pct}%  prefix_len=${r.prefix_len}  suffix_len=${r.suffix_len}  total=${total}${ws}`;
  return `\n${bar}\n${line}\n${bar}\n`;
}

function scriptLines(r: StoredSweepLine): string[] {
  return [
    `\n${centerPython(" Serving Benchmark Result ", 50, "=")}`,
    row("Backend:", r.backend),
    row("Traffic request rate:", formatPythonFloat(r.request_rate)),
    row("Max request concurrency:", r.max_concurrency ? String(r.max_concurrency) : "not set"),
    row("Successful requests:", String(r.completed)),
    rowFixed2("Benchmark duration (s):", r.benchmark_duration),
    row("Total input tokens:", String(r.total_input)),
    row("Total generated tokens:", String(r.total_output)),
    row("Total generated tokens (retokenized):", String(r.total_output_retokenized)),
    rowFixed2("Request throughput (req/s):", r.request_throughput),
    rowFixed2("Input token throughput (tok/s):", r.input_throughput),
    rowFixed2("Output token throughput (tok/s):", r.output_throughput),
    rowFixed2("Total token throughput (tok/s):", r.total_throughput),
    rowFixed2("Concurrency:", r.concurrency),
    section("End-to-End Latency"),
    rowFixed2("Mean E2E Latency (ms):", r.mean_e2e_latency_ms),
    rowFixed2("Median E2E Latency (ms):", r.median_e2e_latency_ms),
    section("Time to First Token"),
    rowFixed2("Mean TTFT (ms):", r.mean_ttft_ms),
    rowFixed2("Median TTFT (ms):", r.median_ttft_ms),
    rowFixed2("P90 TTFT (ms):", r.p90_ttft_ms),
    rowFixed2("P99 TTFT (ms):", r.p99_ttft_ms),
    section("Time per Output Token (excl. 1st token)"),
    rowFixed2("Mean TPOT (ms):", r.mean_tpot_ms),
    rowFixed2("Median TPOT (ms):", r.median_tpot_ms),
    rowFixed2("P90 TPOT (ms):", r.p90_tpot_ms),
    rowFixed2("P99 TPOT (ms):", r.p99_tpot_ms),
    section("Inter-token Latency"),
    rowFixed2("Mean ITL (ms):", r.mean_itl_ms),
    rowFixed2("Median ITL (ms):", r.median_itl_ms),
    rowFixed2("P90 ITL (ms):", r.p90_itl_ms),
    rowFixed2("P99 ITL (ms):", r.p99_itl_ms),
  ];
}

/**
 * With a request rate: TTFT and E2E from the actual send (the script's, above) beside the same from the intended
 * send time, and the client's own queueing. Where they differ, the script's numbers hide a wait.
 */
function openLoopLines(r: StoredSweepLine): string[] {
  if (!Number.isFinite(r.request_rate) || typeof r.ttft_from_intended_mean_ms !== "number") return [];
  const pair = (label: string, sent: number | null, intended: number | null | undefined) =>
    row(label, `${sent === null ? "n/a" : formatFixed2(sent)} / ${typeof intended === "number" ? formatFixed2(intended) : "n/a"}`);
  const lines = [section("Latency from Intended Send Time"), rowFixed2("Achieved request rate (req/s):", r.achieved_request_rate ?? NaN)];
  if (typeof r.duration_limit_s === "number") {
    lines.push(row(`Sent / completed in ${formatPythonFloat(r.duration_limit_s)} s:`, `${r.sent ?? "n/a"} / ${r.completed}`));
  }
  lines.push(
    pair("Mean TTFT from send / intended (ms):", r.mean_ttft_ms, r.ttft_from_intended_mean_ms),
    pair("Median TTFT from send / intended (ms):", r.median_ttft_ms, r.ttft_from_intended_median_ms),
    pair("P90 TTFT from send / intended (ms):", r.p90_ttft_ms, r.ttft_from_intended_p90_ms),
    pair("P99 TTFT from send / intended (ms):", r.p99_ttft_ms, r.ttft_from_intended_p99_ms),
    pair("Mean E2E from send / intended (ms):", r.mean_e2e_latency_ms, r.e2e_from_intended_mean_ms),
    pair("P99 E2E from send / intended (ms):", r.p99_e2e_latency_ms, r.e2e_from_intended_p99_ms),
    pair("Schedule lag mean / P99 (ms):", r.schedule_lag_mean_ms ?? NaN, r.schedule_lag_p99_ms),
  );
  return lines;
}

/** Our sections; each is skipped when its keys are absent (e.g. a JSONL file written by the script itself). */
function extraLines(r: StoredSweepLine): string[] {
  const lines: string[] = [];
  if (typeof r.expected_cached_tokens === "number") {
    const mean = r.mean_cached_tokens;
    const mismatched = r.cached_tokens_mismatched;
    lines.push(
      section("Prefix Cache"),
      row("Expected cached tokens:", String(r.expected_cached_tokens)),
      row("Mean cached tokens:", typeof mean === "number" ? formatFixed2(mean) : "n/a"),
      row("Requests w/ unexpected cache:", typeof mismatched === "number" ? String(mismatched) : "n/a"),
    );
    const pctOrNa = (v: unknown) => (typeof v === "number" ? `${formatFixed2(v * 100)}%` : "n/a");
    if ("expected_hit_ratio" in r) {
      lines.push(row("Hit ratio expected / observed:", `${pctOrNa(r.expected_hit_ratio)} / ${pctOrNa(r.observed_hit_ratio)}`));
    }
    if ("server_cache_hit_rate" in r) lines.push(row("Server hit rate (/metrics):", pctOrNa(r.server_cache_hit_rate)));
    if ("flush_verified" in r) {
      const f = r.flush_verified;
      lines.push(row("Flush verified (probe found 0 cached):", f === true ? "yes" : f === false ? "NO" : "n/a"));
    }
    if (typeof r.cache_check === "string") lines.push(row("Cache check:", r.cache_check));
  }
  lines.push(...pressureLines(r), ...tierLines(r), ...replicaLines(r), ...fidelityLines(r));
  if (typeof r.client_loop_lag_p99_ms === "number") {
    lines.push(section("Client Health"), rowFixed2("Event-loop lag P99 (ms):", r.client_loop_lag_p99_ms));
    if (typeof r.client_own_lag_p99_ms === "number") lines.push(rowFixed2("  of it the client's own (ms):", r.client_own_lag_p99_ms));
    if (typeof r.client_js_cpu_pct === "number") {
      lines.push(rowFixed2("JS thread CPU (% of one core):", r.client_js_cpu_pct));
      if (typeof r.client_http_cpu_pct === "number") lines.push(rowFixed2("HTTP thread CPU (% of one core):", r.client_http_cpu_pct));
    } else {
      lines.push(rowFixed2("Client CPU (% of one core):", typeof r.client_cpu_pct === "number" ? r.client_cpu_pct : NaN));
    }
    if (r.client_saturated === true) lines.push(row("Client saturated:", "YES - numbers may be the client's"));
  }
  if (Array.isArray(r.gates) && r.gates.length > 0) {
    lines.push(section("Gates"));
    for (const g of r.gates) lines.push(`${row(g.expr, formatCell(g.value))} ${verdictText(g.pass)}`);
  }
  if (typeof r.failed === "number" && r.failed > 0) {
    lines.push(section("Failures"), row("Failed requests:", String(r.failed)));
    const errors: ErrorEntry[] = Array.isArray(r.errors) ? r.errors : [];
    for (const e of errors.slice(0, MAX_CONSOLE_ERRORS)) {
      lines.push(`  ${e.kind}: ${e.message.slice(0, MAX_CONSOLE_MESSAGE_CHARS)} x${e.count}`);
    }
  }
  return lines;
}

const numOrNa = (v: unknown): string => (typeof v === "number" ? String(v) : "n/a");

/** Several replicas: how requests were routed, and where the hits went (the ledger). */
function replicaLines(r: StoredSweepLine): string[] {
  if (typeof r.route !== "string" || typeof r.ledger_available_tokens !== "number") return [];
  const share = (v: number | null | undefined) => (typeof v === "number" ? `${formatFixed2(v * 100)}%` : "n/a");
  const lines = [
    section("Replicas"),
    row("Routing (--route):", `${r.route}, imbalance ${typeof r.routing_imbalance === "number" ? formatFixed2(r.routing_imbalance) : "n/a"}`),
    row("Hits available / delivered (tokens):", `${r.ledger_available_tokens} / ${r.ledger_delivered_tokens}`),
    row("Lost to routing / eviction / engine:", `${share(r.loss_routing_ratio)} / ${share(r.loss_eviction_ratio)} / ${share(r.loss_engine_ratio)}`),
  ];
  for (const x of r.replicas ?? []) lines.push(row(`  ${x.url}:`, `${x.requests} requests, ${x.delivered_tokens} of ${x.available_tokens} tokens hit`));
  return lines;
}

/** The cache-fidelity check (--check-fidelity), when it ran on the line. */
function fidelityLines(r: StoredSweepLine): string[] {
  if (typeof r.fidelity_checked !== "number") return [];
  const lines = [
    section("Cache Fidelity"),
    row("Answers compared (warm vs cold):", String(r.fidelity_checked)),
    row(
      "Identical / near tie / diverged:",
      `${r.fidelity_identical ?? "n/a"} / ${r.fidelity_near_tie ?? "n/a"} / ${r.fidelity_diverged ?? "n/a"}${(r.fidelity_diverged ?? 0) > 0 ? "  DIVERGED: suspect wrong KV" : ""}`,
    ),
  ];
  if ((r.fidelity_unclassified ?? 0) > 0) lines.push(row("Unclassified (no log-probabilities):", String(r.fidelity_unclassified)));
  if ((r.fidelity_first_divergence ?? []).length > 0) lines.push(row("First differing token:", r.fidelity_first_divergence!.join(" ")));
  if (typeof r.fidelity_max_gap_nats === "number") lines.push(row("Largest gap there (nats):", r.fidelity_max_gap_nats.toFixed(4)));
  if ((r.fidelity_unproven ?? 0) > 0) lines.push(row("Not compared (cache unproven):", String(r.fidelity_unproven)));
  if (typeof r.fidelity_note === "string") lines.push(`  ${r.fidelity_note}`);
  return lines;
}

/** Working set against capacity: shown for a working set of several prefixes, or when hits fell short. */
function pressureLines(
  r: Partial<
    Pick<
      SweepLine,
      | "working_set"
      | "working_set_tokens"
      | "cache_capacity_tokens"
      | "host_cache_capacity_tokens"
      | "working_set_fits"
      | "cache_shortfall_requests"
      | "eviction"
    >
  >,
): string[] {
  if (typeof r.working_set_tokens !== "number") return [];
  if (!((r.working_set ?? 1) > 1 || r.eviction === true)) return [];
  const fits = r.working_set_fits;
  return [
    section("Cache Pressure"),
    row("Working set (tokens):", `${r.working_set_tokens}${(r.working_set ?? 1) > 1 ? ` (${r.working_set} prefixes)` : ""}`),
    row("Cache capacity device / host (tokens):", `${numOrNa(r.cache_capacity_tokens)} / ${numOrNa(r.host_cache_capacity_tokens)}`),
    row("Working set fits the device:", fits === true ? "yes" : fits === false ? "NO: over capacity" : "n/a"),
    row("Requests below expected (eviction):", numOrNa(r.cache_shortfall_requests)),
  ];
}

/** Where the hits came from: shown when some came from a tier other than the device. */
function tierLines(r: Partial<Pick<SweepLine, "cached_tokens_by_tier" | "ttft_by_tier">>): string[] {
  const t = r.cached_tokens_by_tier;
  if (t === null || t === undefined || typeof t !== "object" || (t.host === 0 && t.storage === 0)) return [];
  const lines = [section("Cache Tiers"), row("Cached tokens device / host / storage:", `${t.device} / ${t.host} / ${t.storage}`)];
  const byTier = r.ttft_by_tier;
  if (byTier !== null && byTier !== undefined && typeof byTier === "object") {
    for (const tier of ["device", "host", "storage", "none"] as const) {
      const x = byTier[tier];
      if (x) lines.push(row(`Mean TTFT, prefix from ${tier} (ms):`, `${formatFixed2(x.mean_ttft_ms)} (${x.requests} requests)`));
    }
  }
  return lines;
}

/** The script's print_benchmark_result output for one pct, with our sections before the closing rule. */
export function renderConsole(r: StoredSweepLine): string {
  return [...scriptLines(r), ...openLoopLines(r), ...extraLines(r), "=".repeat(50)].join("\n") + "\n";
}

/** Header and result block of one pct, as the script prints them. */
export function renderSweepLine(r: StoredSweepLine): string {
  return renderLineHeader(r) + renderConsole(r);
}

/** The console block printed after the sweep: the TTFT model over every measured request. */
export function renderTtftFit(fit: TtftModel | null): string {
  const line = (label: string, value: string) => `${label.padEnd(40)} ${value.padEnd(10)}`;
  const rule = "-".repeat(11) + "TTFT model (whole sweep)" + "-".repeat(15);
  if (fit === null) return `${rule}\n(not enough distinct uncached lengths to fit TTFT = a + b·uncached)\n${"=".repeat(50)}`;
  return [
    rule,
    line("Requests in fit:", String(fit.n)),
    line("Fixed overhead (ms):", fit.fixed_ms.toFixed(2)),
    line("Prefill cost (µs/uncached token):", fit.prefill_us_per_token.toFixed(3)),
    line("TTFT saved (µs/cached token):", fit.saved_us_per_cached_token.toFixed(3)),
    line("Fit R²:", fit.r2 === null ? "n/a" : fit.r2.toFixed(4)),
    "=".repeat(50),
  ].join("\n");
}

/** The block after a sweep, as run-sweep prints it: a row per pct, the gates, the TTFT model. */
export function renderSweepEnd(pcts: readonly StoredSweepLine[], fit: TtftModel | null): string {
  return `\n${renderSweepSummary(pcts)}\n${renderTtftFit(fit)}\n`;
}

/** What 0.1 printed after a sweep: the TTFT model alone. */
const renderLegacySweepEnd = (fit: TtftModel | null): string => `\n${renderTtftFit(fit)}\n`;

/** The console report of a results file's runs, as the runs printed it. */
export function renderRunsReport(runs: readonly RunLines[]): string {
  let out = "";
  for (const run of runs) {
    for (const pct of run.pcts) out += renderSweepLine(pct);
    if (run.hasTtftModel) out += run.runId !== null ? renderSweepEnd(run.pcts, run.ttftModel) : renderLegacySweepEnd(run.ttftModel);
  }
  return out;
}

/** The console report rebuilt from a results file's text alone. */
export function renderJsonlReport(text: string, name?: string): string {
  return renderRunsReport(readResults(text, name));
}
