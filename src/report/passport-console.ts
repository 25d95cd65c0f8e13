/** A cache passport on the console: each figure, how exact it is, and how it was measured (or why not). Pure. */
import type { Passport, PassportFigure } from "../schema/passport.ts";

const WIDTH = 28;
const row = (label: string, value: string) => `${label.padEnd(WIDTH)} ${value}`;

function figure<T>(label: string, f: PassportFigure<T>, show: (v: T) => string): string[] {
  const value = f.value === null ? `not measured: ${f.why ?? "unknown"}` : `${show(f.value)}${f.uncertainty ? ` (${f.uncertainty})` : ""}`;
  const lines = [row(label, value), `${"".padEnd(WIDTH)}   how: ${f.method}`];
  if (f.value !== null && f.why) lines.push(`${"".padEnd(WIDTH)}   note: ${f.why}`);
  return lines;
}

const ms = (v: number | null) => (v === null ? "n/a" : `${v.toFixed(1)} ms`);

export function renderPassport(p: Passport): string {
  const stated = [
    p.stated.page_size === null ? null : `page ${p.stated.page_size}`,
    p.stated.capacity_tokens === null ? null : `capacity ${p.stated.capacity_tokens}`,
    p.stated.host_capacity_tokens ? `host tier ${p.stated.host_capacity_tokens}` : null,
    p.stated.slots === null ? null : `${p.stated.slots} slots`,
  ].filter((x) => x !== null);
  return [
    `============ Cache passport: ${p.base_url} (${p.engine}${p.server_version ? ` ${p.server_version}` : ""}) ============`,
    ...figure("Page size (tokens):", p.page_size_tokens, String),
    ...figure("Capacity (tokens):", p.capacity_tokens, String),
    ...figure("Answers cached:", p.outputs_cached, (v) => (v ? "yes" : "no")),
    ...(p.insert_at === undefined ? [] : figure("Prompt cached at:", p.insert_at, (v) => (v === "prefill" ? "its prefill's end" : "its finish"))),
    ...figure("Eviction order:", p.eviction, (v) => v.toUpperCase()),
    ...figure("Idle expiry:", p.idle_expiry, (v) => (v === "none_within_wait" ? "none within the wait" : "expired within the wait")),
    ...figure("Second tier:", p.second_tier, (v) =>
      v.present
        ? `yes${v.total_capacity_tokens === null ? "" : `, both tiers hold ${v.total_capacity_tokens} tokens`}; TTFT first-tier hit ${ms(v.ttft_device_hit_ms)}, second-tier hit ${ms(v.ttft_second_tier_hit_ms)}, cold ${ms(v.ttft_cold_ms)}`
        : `no; TTFT hit ${ms(v.ttft_device_hit_ms)}, cold ${ms(v.ttft_cold_ms)}`,
    ),
    ...figure(
      "Slots (llama.cpp):",
      p.slots,
      (v) =>
        `${v.count} slots of ${v.context_tokens ?? "?"} tokens, ${v.separate_caches ? "each its own cache" : "one cache"}; RAM cache ${v.ram_cache_restores ? "restores an erased slot" : "does not restore an erased slot"}`,
    ),
    row("The server states:", stated.length > 0 ? stated.join(", ") : "nothing of it"),
    row("Cost:", `${p.requests_sent} requests, ${p.wall_s.toFixed(1)} s`),
    "=".repeat(60),
  ].join("\n");
}
