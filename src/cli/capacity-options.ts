/**
 * `warmbench capacity`'s flags into CapacityOptions: the workload through run's own parser (so every workload flag
 * is checked as run checks it), then the search's flags. Every problem is one UsageError naming the flag (exit 2),
 * before anything is sent.
 */
import { UsageError } from "../errors.ts";
import type { CapacityOptions, CapacityRequirement } from "../config/capacity-options.ts";
import { CAPACITY_DEFAULTS as c, type SearchMode } from "../config/capacity-defaults.ts";
import type { RunOptions } from "../config/options.ts";
import { GATE_OPS } from "../schema/gate.ts";
import { parseGates } from "../gates/parse.ts";
import { checkGatesMatchPlan } from "../gates/plan.ts";
import { plannedSweepAxes } from "../schema/axes.ts";
import { checkSearchGates } from "../capacity/gate-direction.ts";
import { str, type RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { parseRunOptions } from "./options.ts";

const NUMBER = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`;
const REQUIRE_RE = new RegExp(`^(${NUMBER})(?:@pct(${GATE_OPS.join("|")}|=)(${NUMBER}))?$`);

function parseNumber(flag: string, text: string): number {
  const n = text.trim() === "" ? NaN : Number(text.trim());
  if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, got "${text}"`);
  return n;
}

/** `--bracket LOW:HIGH`: 0 < LOW < HIGH (whole numbers >= 1 for a concurrency). */
function parseBracket(text: string | undefined, search: SearchMode): [number, number] {
  if (text === undefined) return [...c.bracket[search]];
  const parts = text.split(":");
  if (parts.length !== 2) throw new UsageError(`--bracket ${text}: expected LOW:HIGH, e.g. 0.5:200`);
  const [lo, hi] = parts.map((p) => parseNumber("bracket", p)) as [number, number];
  if (!(lo > 0)) throw new UsageError(`--bracket ${text}: the low bound must be above 0 (a load of ${lo} sends nothing)`);
  if (search === "concurrency" && (!Number.isInteger(lo) || !Number.isInteger(hi)))
    throw new UsageError(`--bracket ${text}: a concurrency is a whole number of requests`);
  if (!(hi > lo)) throw new UsageError(`--bracket ${text}: the high bound must be above the low one`);
  return [lo, hi];
}

/** `--require 40` or `--require 40@pct>=90`, repeatable (newline-joined). */
function parseRequirements(text: string | undefined, pcts: readonly number[]): CapacityRequirement[] {
  const out: CapacityRequirement[] = [];
  for (const raw of (text ?? "").split("\n")) {
    const expr = raw.replace(/\s+/g, "");
    if (expr === "") continue;
    const m = REQUIRE_RE.exec(expr);
    if (m === null) throw new UsageError(`--require "${raw}": expected VALUE or VALUE@pct OP N, e.g. 40 or 40@pct>=90`);
    const value = Number(m[1]);
    if (!(value >= 0)) throw new UsageError(`--require "${raw}": a capacity floor cannot be negative`);
    type Op = NonNullable<CapacityRequirement["pct"]>["op"];
    const pct = m[2] === undefined ? null : { op: (m[2] === "=" ? "==" : m[2]) as Op, value: Number(m[3]) };
    const req: CapacityRequirement = { expr, value, pct };
    if (!pcts.some((p) => requirementApplies(req, p))) throw new UsageError(`--require "${raw}": its scope matches none of --pcts ${pcts.join(",")}`);
    out.push(req);
  }
  return out;
}

export function requirementApplies(req: CapacityRequirement, pct: number): boolean {
  if (req.pct === null) return true;
  const v = req.pct.value;
  switch (req.pct.op) {
    case "<":
      return pct < v;
    case "<=":
      return pct <= v;
    case ">":
      return pct > v;
    case ">=":
      return pct >= v;
    case "==":
      return pct === v;
    case "!=":
      return pct !== v;
  }
}

/** Turns raw `warmbench capacity` flags into CapacityOptions, or throws one UsageError naming the flag. */
export function parseCapacityOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): CapacityOptions {
  if (str(raw, "base-url")?.includes(",")) throw new UsageError("--base-url: several replicas (A,B,...) are routed by run and multiturn only; give one URL");
  // Every bound flag of capacity, parsed from its declaration (config/flags/bound.ts); what follows relates several.
  const bound = parseBound("capacity", raw, env);
  const { search, probeRequests, start } = bound;
  if (search === "concurrency") {
    for (const flag of ["max-concurrency", "burstiness", "duration"]) {
      if (raw[flag] !== undefined)
        throw new UsageError(`--${flag}: a concurrency search runs a closed loop at the concurrency it probes, so --${flag} would do nothing`);
    }
  }
  // --duration beside --num-prompts: refused by the declaration (conflicts).
  const workingSet = str(raw, "working-set");
  if (workingSet?.includes(",")) throw new UsageError(`--working-set ${workingSet}: a capacity search probes one working-set size (run one search per size)`);
  // The workload through run's parser: the load and the gates are the search's, so they are left to it.
  const { gate: _g, "gates-file": _f, duration: _d, ...workload } = raw;
  const run = parseRunOptions(
    {
      ...workload,
      "num-prompts": String(probeRequests),
      "request-rate": search === "rate" ? "1" : "inf",
      "max-concurrency": search === "rate" ? (str(raw, "max-concurrency") ?? "0") : "1",
      "verify-cache": "warn",
    },
    env,
  );
  const gates = parseGates(str(raw, "gate"), str(raw, "gates-file"));
  checkSearchGates(gates);
  checkGatesMatchPlan(gates, plannedSweepAxes(run.pcts, run.workingSets, [Infinity]));
  const bracket = parseBracket(str(raw, "bracket"), search);
  const startText = str(raw, "start") ?? c.start;
  if (start !== null && (start < bracket[0] || start > bracket[1]))
    throw new UsageError(`--start ${startText}: outside the --bracket ${bracket.join(":")} the search stays within`);
  if (start !== null && search === "concurrency" && !Number.isInteger(start))
    throw new UsageError(`--start ${startText}: a concurrency is a whole number of requests`);
  // The search's own fields: what run's options do not hold (the workload's flags are run's, parsed by run's parser).
  const own = Object.fromEntries(Object.entries(bound).filter(([field]) => !(field in run))) as Omit<typeof bound, keyof RunOptions>;
  return {
    run: { ...run, gates },
    ...own,
    bracket,
    require: parseRequirements(str(raw, "require"), run.pcts),
  };
}
