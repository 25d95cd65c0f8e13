/**
 * The multi-turn console report: one table row per round (printed as each round completes), then a footer that marks
 * the cache capacity against the working set and the rounds where observed hits fell below expected. Pure functions
 * returning strings; `warmbench report` rebuilds the same table from a results file's round lines.
 */
import type { RoundRecord } from "../schema/lines.ts";
import { formatFixed2 } from "./console.ts";
import { gatesCell, verdictText } from "./sweep-table.ts";
import { formatCell, renderTextTable } from "./text-table.ts";
import { parseJsonlLine } from "./jsonl.ts";

/** A round line as read back from a file. */
export type RoundLine = Partial<RoundRecord> & { type: "round"; round: number };

const COLUMNS: Array<[string, number]> = [
  ["round", 5],
  ["turns", 9],
  ["prompt", 8],
  ["expected hit", 12],
  ["observed hit", 12],
  ["short", 6],
  ["host tok", 9],
  ["TTFT mean", 10],
  ["TTFT p99", 10],
  ["ITL mean", 9],
  ["out tok/s", 10],
  ["check", 10],
];
const WIDTH = COLUMNS.reduce((w, [, n]) => w + n + 1, 0);

const cells = (values: string[]): string => values.map((v, k) => v.padStart((COLUMNS[k] as [string, number])[1])).join(" ");
const pct = (v: number | null | undefined): string => (typeof v === "number" ? `${formatFixed2(v * 100)}%` : "n/a");
const num = (v: number | null | undefined): string => (typeof v === "number" ? String(v) : "n/a");
const ms = (v: number | null | undefined): string => (typeof v === "number" ? formatFixed2(v) : "n/a");

/** The title and column names, printed before round 0. */
export function renderRoundTableHeader(title: string): string {
  const rule = "=".repeat(WIDTH);
  return `\n${rule}\n${title}\n${rule}\n${cells(COLUMNS.map(([name]) => name))}\n${"-".repeat(WIDTH)}\n`;
}

/** One round's row. */
export function renderRoundRow(r: RoundLine): string {
  const gates = r.gates && r.gates.length > 0 ? ` gates ${gatesCell(r.gates)}` : "";
  const flags = `${r.interrupted ? " (cut)" : ""}${r.eviction ? " EVICT" : ""}${gates}`;
  return (
    cells([
      String(r.round),
      `${num(r.completed)}/${num(r.clients_in_round)}`,
      typeof r.mean_prompt_len === "number" ? String(Math.round(r.mean_prompt_len)) : "n/a",
      pct(r.expected_hit_ratio),
      pct(r.observed_hit_ratio),
      num(r.cache_shortfall_requests),
      r.cached_tokens_by_tier ? String(r.cached_tokens_by_tier.host) : "n/a",
      ms(r.mean_ttft_ms),
      ms(r.p99_ttft_ms),
      ms(r.mean_itl_ms),
      ms(r.output_throughput),
      String(r.cache_check ?? "n/a"),
    ]) + `${flags}\n`
  );
}

/** After the last round: capacity against the working set, where hits fell short, where they came from. */
export function renderRoundTableFooter(rounds: readonly RoundLine[]): string {
  const lines = ["-".repeat(WIDTH)];
  const last = rounds.at(-1);
  if (last !== undefined) {
    const capacity = `${num(last.cache_capacity_tokens)} tokens on the device${typeof last.host_cache_capacity_tokens === "number" ? `, ${last.host_cache_capacity_tokens} in the host tier` : ""}`;
    lines.push(`Cache capacity: ${capacity}`);
    const over = rounds.filter((r) => r.working_set_fits === false).map((r) => r.round);
    const largest = Math.max(...rounds.map((r) => r.working_set_tokens ?? 0));
    lines.push(
      `Working set: up to ${largest} tokens; ${over.length === 0 ? (last.working_set_fits === null ? "capacity unknown" : "fits the device in every round") : `over the device capacity from round ${over[0]}`}`,
    );
    const evicted = rounds.filter((r) => r.eviction === true).map((r) => r.round);
    lines.push(evicted.length === 0 ? "Observed hits: as expected in every round" : `Observed hits below expected (eviction) in rounds ${evicted.join(", ")}`);
    const host = rounds.reduce((sum, r) => sum + (r.cached_tokens_by_tier?.host ?? 0), 0);
    const storage = rounds.reduce((sum, r) => sum + (r.cached_tokens_by_tier?.storage ?? 0), 0);
    if (host > 0 || storage > 0) lines.push(`Hits from lower tiers: ${host} tokens from the host, ${storage} from storage`);
    const approximate = rounds.reduce((sum, r) => sum + (r.approximate_turns ?? 0), 0);
    if (approximate > 0) lines.push(`Approximate turns (answers re-tokenized from text): ${approximate}`);
    if (last.flush_verified !== undefined)
      lines.push(`Flush verified (canary found 0 cached): ${last.flush_verified === true ? "yes" : last.flush_verified === false ? "NO" : "n/a"}`);
    const verdicts = rounds.flatMap((r) => (r.gates ?? []).map((g) => [g.expr, String(r.round), formatCell(g.value), verdictText(g.pass)]));
    if (verdicts.length > 0) {
      const failed = verdicts.filter((v) => v[3] !== "pass").length;
      lines.push(failed === 0 ? `Gates: all ${verdicts.length} verdicts pass` : `Gates: ${failed} of ${verdicts.length} verdicts FAIL`);
      lines.push(renderTextTable(["gate", "round", "value", "verdict"], verdicts, ["left", "right", "right", "left"]).trimEnd());
    }
  }
  lines.push("=".repeat(WIDTH));
  return lines.join("\n") + "\n";
}

/** Whether a parsed results-file line is a multi-turn round line. */
export function isRoundLine(obj: unknown): obj is RoundLine {
  return typeof obj === "object" && obj !== null && (obj as { type?: unknown }).type === "round" && typeof (obj as { round?: unknown }).round === "number";
}

/** Round lines grouped into runs by run_id, in file order. */
export function groupRounds(lines: readonly RoundLine[]): RoundLine[][] {
  const runs = new Map<string, RoundLine[]>();
  for (const l of lines) {
    const key = l.run_id ?? "";
    const run = runs.get(key) ?? [];
    run.push(l);
    runs.set(key, run);
  }
  return [...runs.values()];
}

/** The round tables of a results file's runs (grouped by run_id, in file order). */
export function renderRoundsReport(lines: readonly RoundLine[]): string {
  let out = "";
  for (const rounds of groupRounds(lines)) {
    const first = rounds[0] as RoundLine;
    out += renderRoundTableHeader(roundTitle(first));
    for (const r of rounds) out += renderRoundRow(r);
    out += renderRoundTableFooter(rounds);
  }
  return out;
}

/** The table's title: the conversation's shape. */
export function roundTitle(
  r: Pick<
    RoundLine,
    | "num_clients"
    | "num_rounds"
    | "shared_system_tokens"
    | "first_turn_tokens"
    | "turn_tokens"
    | "output_len"
    | "round_barrier"
    | "ready_queue_policy"
    | "working_set"
  >,
): string {
  const barrier = r.round_barrier ? ", round barrier" : "";
  const ws = (r.working_set ?? 1) > 1 ? `, ${r.working_set} system prompts` : "";
  return (
    `multi-turn: ${num(r.num_clients)} clients x ${num(r.num_rounds)} rounds  system=${num(r.shared_system_tokens)}  ` +
    `first turn=${num(r.first_turn_tokens)}  turn=${num(r.turn_tokens)}  output=${num(r.output_len)}  (${r.ready_queue_policy ?? "?"}${barrier}${ws})`
  );
}

/** The round lines of a results file's text, in file order (a line that is not JSON is readResults' to refuse). */
export function readRoundLines(text: string): RoundLine[] {
  const rounds: RoundLine[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"round"')) continue;
    try {
      const obj: unknown = parseJsonlLine(line.trim());
      if (isRoundLine(obj)) rounds.push(obj);
    } catch {
      // readResults refuses a broken line, naming it
    }
  }
  return rounds;
}
