/** `warmbench capacity`'s defaults and validated options (parsed in src/cli/capacity-options.ts). */
import type { RunOptions } from "./options.ts";

export const CAPACITY_DEFAULTS = {
  search: "rate",
  pcts: "0,90",
  /** Enough for a p99 with a couple of samples beyond it (a p99 of 100 requests is their largest but one). */
  probeRequests: 200,
  precision: "5%",
  confirm: 2,
  start: "auto",
  bracket: { rate: [0.1, 10_000], concurrency: [1, 4096] },
} as const;

export const SEARCH_MODES = ["rate", "concurrency"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** `--require VALUE[@pct OP N]`: a capacity floor at the pcts its scope holds. */
export interface CapacityRequirement {
  expr: string;
  value: number;
  /** The pct scope ("@pct>=90"), or null: every pct. */
  pct: { op: "<=" | ">=" | "==" | "!=" | "<" | ">"; value: number } | null;
}

export interface CapacityOptions {
  /** The probes' workload as run takes it: one pct, one working set, the load set per probe. */
  run: RunOptions;
  search: SearchMode;
  probeRequests: number;
  /** --duration (rate only): arrivals per probe last this long instead of a request count. */
  probeDurationS: number | null;
  /** A fraction (0.05). */
  precision: number;
  confirm: number;
  /** null: auto. */
  start: number | null;
  bracket: [number, number];
  require: CapacityRequirement[];
}
