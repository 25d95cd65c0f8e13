/**
 * Flags of `warmbench capacity`: its own (the search) declared here, and the workload, server and cache flags of
 * `run` it takes with run's meaning, named here and not declared again. What the search sets itself (the rate, the
 * flush, the cache check) it does not take: --request-rate, --flush, --verify-cache would fight it. The request count
 * is --num-prompts in every command (here: per probe), the seconds of arrivals --duration (here: per probe).
 */
import { CAPACITY_DEFAULTS as c, SEARCH_MODES, type CapacityOptions } from "../capacity-options.ts";
import { parseIntFlag, parsePositive, parsePrecision } from "../flag-values.ts";
import { bindTo, chosen } from "./binding.ts";
import type { FlagDecl } from "./types.ts";

/** A flag bound to a capacity option field, its parser typed by the field. */
const to = bindTo<CapacityOptions>();

/** run's flags that capacity takes with run's meaning, and the ones whose help or default differ there. */
const FROM_RUN: Record<string, true | FlagDecl["commands"]["run"]> = {
  backend: true,
  endpoint: true,
  "base-url": true,
  host: true,
  port: true,
  model: true,
  tokenizer: true,
  "total-tokens": true,
  "output-len": true,
  "num-prompts": {
    help: "Requests per probe (a p99 needs about 100 or more)",
    default: c.probeRequests,
    bind: to("probeRequests", (t, f) => parseIntFlag(f, t, 1)),
  },
  duration: {
    help: "--search rate: seconds of arrivals per probe, instead of --num-prompts",
    conflicts: { "num-prompts": "--num-prompts is the other way to size a probe; give one of them" },
    bind: to("probeDurationS", (t, f) => parsePositive(f, t, "a number of seconds", false)),
  },
  "max-concurrency": {
    help: "--search rate: most requests in flight in a probe (0 = no limit, the open loop); --search concurrency: refused (the search sets it)",
    default: 0,
  },
  pcts: { help: "Comma-separated shared-prefix percentages: one search each", default: c.pcts },
  burstiness: { help: "--search rate: gamma shape of the gaps between arrivals (1 = Poisson, inf = evenly spaced)" },
  "working-set": { help: "Distinct shared prefixes in rotation during every probe (one size)" },
  seed: true,
  "disable-ignore-eos": true,
  "output-file": { help: "JSONL file to append every probe's line and one capacity line per pct" },
  "extra-request-body": true,
  settle: true,
  "flush-deadline": true,
  "request-timeout": true,
  "stall-timeout": true,
  "cache-tolerance": { help: "Share of a probe's requests whose cached tokens may disagree before its cache check fails (a percent, e.g. 5%)" },
  gate: { help: "An SLO every probe must meet, METRIC OP VALUE, e.g. 'ttft_from_intended_p99_ms<=500' or 'failed==0'; repeatable; at least one" },
  "gates-file": true,
  quiet: true,
  verbose: true,
  revision: true,
  "api-key": true,
  "served-model-name": true,
  "page-size": true,
};

/** Adds `capacity` to the commands of the run flags it takes. */
export const withCapacity = (decls: readonly FlagDecl[]): FlagDecl[] =>
  decls.map((d) => (d.name in FROM_RUN && d.commands.run !== undefined ? { ...d, commands: { ...d.commands, capacity: FROM_RUN[d.name]! } } : d));

const text = (name: string, help: string, more: Partial<FlagDecl> = {}): FlagDecl => ({ name, type: "string", help, commands: { capacity: true }, ...more });

export const CAPACITY_FLAGS: FlagDecl[] = [
  text("search", "What to search: rate (open loop, latency from the intended send) or concurrency (closed loop)", {
    default: c.search,
    choices: SEARCH_MODES,
    bind: to("search", chosen(SEARCH_MODES)),
  }),
  text("precision", "Stop when the bracket [pass, fail] is this narrow, relative to its low end (a percent, e.g. 5%)", {
    default: c.precision,
    bind: to("precision", (t) => parsePrecision(t)),
  }),
  text("confirm", "Agreeing probes each end of the final bracket needs (of at most 2K-1)", {
    default: c.confirm,
    bind: to("confirm", (t, f) => parseIntFlag(f, t, 1, 10)),
  }),
  text("start", "The first load probed (req/s or requests), or auto: the throughput of a short closed-loop probe (rate), the server's slots (concurrency)", {
    default: c.start,
  }),
  text("bracket", "LOW:HIGH loads the search stays within (default: 0.1:10000 req/s, or 1:4096 requests)"),
  text("require", "VALUE[@pct>=N]: exit 6 when a capacity found is below VALUE (at the pcts the scope holds); repeatable", { repeatable: true }),
];
