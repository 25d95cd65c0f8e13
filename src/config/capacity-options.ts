/** `warmbench capacity`'s validated options (parsed in src/cli/capacity-options.ts). */
import type { RunOptions } from "./options.ts";
import type { DeclaredFields } from "./flags/declared-fields.ts";
import type { ClientDecl } from "./flags/index.ts";

/** `--require VALUE[@pct OP N]`: a capacity floor at the pcts its scope holds. */
export interface CapacityRequirement {
  expr: string;
  value: number;
  /** The pct scope ("@pct>=90"), or null: every pct. */
  pct: { op: "<=" | ">=" | "==" | "!=" | "<" | ">"; value: number } | null;
}

/**
 * The search's own declarations' fields (what run's options do not hold: the search mode, the probe's size, the
 * precision, the confirmations, the start), typed by their parsers; the probes' workload is run's options.
 */
export interface CapacityOptions extends Omit<DeclaredFields<ClientDecl, "capacity">, keyof RunOptions> {
  /** The probes' workload as run takes it: one pct, one working set, the load set per probe. */
  run: RunOptions;
  bracket: [number, number];
  require: CapacityRequirement[];
}
