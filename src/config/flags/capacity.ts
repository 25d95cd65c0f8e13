/**
 * Flags of `warmbench capacity`: its own (the search) declared here. The workload, server and cache flags of `run` it
 * takes with run's meaning are run's declarations (measure.ts), which name capacity among their commands, with its help
 * where it differs. What the search sets itself (the rate, the flush, the cache check) it does not take:
 * --request-rate, --flush, --verify-cache would fight it. The request count is --num-prompts in every command (here:
 * per probe), the seconds of arrivals --duration (here: per probe).
 */
import { CAPACITY_DEFAULTS as c, SEARCH_MODES } from "../capacity-defaults.ts";
import { parseIntFlag, parseNumberFlag, parsePrecision } from "../flag-values.ts";
import { bindField, chosen } from "./binding.ts";
import type { FlagDecl } from "./types.ts";

type More = Partial<Omit<FlagDecl, "name" | "type" | "help" | "commands">>;
const text = <const M extends More = Record<never, never>>(name: string, help: string, more: M = {} as M) => ({
  name,
  type: "string" as const,
  help,
  commands: { capacity: true } as const,
  ...more,
});

const DECLS = [
  text("search", "What to search: rate (open loop, latency from the intended send) or concurrency (closed loop)", {
    default: c.search,
    choices: SEARCH_MODES,
    bind: bindField("search", chosen(SEARCH_MODES)),
  }),
  text("precision", "Stop when the bracket [pass, fail] is this narrow, relative to its low end (a percent, e.g. 5%)", {
    default: c.precision,
    bind: bindField("precision", (t) => parsePrecision(t)),
  }),
  text("confirm", "Agreeing probes each end of the final bracket needs (of at most 2K-1)", {
    default: c.confirm,
    bind: bindField("confirm", (t, f) => parseIntFlag(f, t, 1, 10)),
  }),
  text("start", "The first load probed (req/s or requests), or auto: the throughput of a short closed-loop probe (rate), the server's slots (concurrency)", {
    default: c.start,
    // A number, or auto (null): checked against the --bracket by the command's parser.
    bind: bindField("start", (t, f) => (t === "auto" ? null : parseNumberFlag(f, t, Number.NEGATIVE_INFINITY))),
  }),
  text("bracket", "LOW:HIGH loads the search stays within (default: 0.1:10000 req/s, or 1:4096 requests)"),
  text("require", "VALUE[@pct>=N]: exit 6 when a capacity found is below VALUE (at the pcts the scope holds); repeatable", { repeatable: true }),
] as const;

export const CAPACITY_FLAGS: readonly FlagDecl[] = DECLS;

/** The declarations as written, for the types of the options they fill. */
export type CapacityDecl = (typeof DECLS)[number];
