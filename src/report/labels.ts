/**
 * Names runs by what differs between their `run` headers (options and the server's own description), so a shell
 * loop over a server flag labels itself: `chunked_prefill_size=4096` vs `chunked_prefill_size=8192`. Keys that
 * differ between any two launches of the same thing (ports, start times, random seeds, live counters) and output
 * paths never make a label.
 */
import type { RunInfo } from "../schema/nested.ts";

/** Last path segments that change from launch to launch or name where output went, never what was measured. */
const VOLATILE_KEYS = new Set([
  "port",
  "host",
  "base_url",
  "urls",
  "startup_time",
  "status",
  "internal_states",
  "random_seed",
  "nccl_port",
  "dist_init_addr",
  "output_file",
  "dump_prompts",
  "request_details",
  "verbose",
  "quiet",
  "gates",
  "api_key",
  "pid",
  "file_storage_path",
]);

/** Shown before "+N more" in a label. */
const MAX_LABEL_KEYS = 3;

/** A run header flattened to dotted keys with printable values (objects walked, arrays as JSON). */
export function flattenHeader(run: RunInfo | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!run) return out;
  const walk = (prefix: string, value: unknown) => {
    const last = prefix.slice(prefix.lastIndexOf(".") + 1);
    if (VOLATILE_KEYS.has(last) || last.endsWith("_port")) return;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(`${prefix}.${k}`, v);
      return;
    }
    out.set(prefix, typeof value === "string" ? value : JSON.stringify(value));
  };
  walk("options", run.options);
  walk("server_info", run.server_info ?? {});
  for (const key of ["served_model", "server_version", "page_size"] as const) walk(key, run[key]);
  return out;
}

/** A key as a label shows it: without its "options." / "server_info." prefix. */
export const shortKey = (key: string): string => key.replace(/^(options|server_info)\./, "");

/** Keys whose values are not the same in every run (a key missing from a run counts as a difference). */
export function differingKeys(headers: readonly Map<string, string>[]): string[] {
  const keys = new Set<string>();
  for (const h of headers) for (const k of h.keys()) keys.add(k);
  const differing: string[] = [];
  for (const k of keys) {
    const first = headers[0]?.get(k);
    if (headers.some((h) => h.get(k) !== first)) differing.push(k);
  }
  return differing;
}

/** Something that has a header and a fallback name (its file, and its place in the file). */
export interface Labelable {
  header: RunInfo | undefined;
  fallbackName: string;
}

/**
 * The keys a label shows: greedily the one that tells the most runs apart, until every run is told apart (at most
 * MAX_LABEL_KEYS); so `backend=vllm` is not shown when `chunked_prefill_size` alone names every run.
 */
function chooseKeys(keys: readonly string[], headers: readonly Map<string, string>[]): string[] {
  const chosen: string[] = [];
  const distinct = (ks: readonly string[]) => new Set(headers.map((h) => JSON.stringify(ks.map((k) => h.get(k) ?? null)))).size;
  while (chosen.length < MAX_LABEL_KEYS && distinct(chosen) < headers.length) {
    let best: string | null = null;
    let bestCount = distinct(chosen);
    for (const k of keys) {
      if (chosen.includes(k)) continue;
      const count = distinct([...chosen, k]);
      if (count > bestCount) [best, bestCount] = [k, count];
    }
    if (best === null) break;
    chosen.push(best);
  }
  return keys.filter((k) => chosen.includes(k));
}

/** One label per run: the differing settings that tell the runs apart as `key=value`, else the fallback name; always unique. */
export function labelRuns(runs: readonly Labelable[]): { labels: string[]; differing: string[] } {
  const headers = runs.map((r) => flattenHeader(r.header));
  const differing = runs.length > 1 ? differingKeys(headers) : [];
  // The same setting often shows twice (options.page_size and page_size): name each short key once.
  const candidates: string[] = [];
  const seen = new Set<string>();
  for (const k of differing) {
    if (seen.has(shortKey(k))) continue;
    seen.add(shortKey(k));
    candidates.push(k);
  }
  const shown = chooseKeys(candidates, headers);
  const labels = runs.map((r, i) => {
    if (shown.length === 0) return r.fallbackName;
    const parts = shown.map((k) => `${shortKey(k)}=${headers[i]!.get(k) ?? "(none)"}`);
    // The rest is in the report's table of differing settings.
    return candidates.length > shown.length ? `${parts.join(", ")}, …` : parts.join(", ");
  });
  // Two runs alike in every labelled key (repeats) keep their fallback names too.
  const counts = new Map<string, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  const named = labels.map((l, i) => ((counts.get(l) ?? 0) > 1 && l !== runs[i]!.fallbackName ? `${l} (${runs[i]!.fallbackName})` : l));
  // Same-named files in different folders: number what is still ambiguous.
  const unique = named.map((l, i) => (named.indexOf(l) !== named.lastIndexOf(l) ? `${l} [${i + 1}]` : l));
  return { labels: unique, differing };
}
