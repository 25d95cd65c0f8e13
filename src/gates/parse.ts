/**
 * Gates: `METRIC OP VALUE [@AXIS OP N ...]`, e.g. `p99_ttft_ms<=800`, `failed==0`, `output_throughput>=1500@pct>=90`,
 * `p99_ttft_ms<=900@round>=2`, `mean_ttft_ms<50@pct=90@working_set=4`. A scope selects lines by their axes (axes.ts;
 * `@pct` is `@shared_prefix_pct`); several scopes must all hold. Parsed and checked against the lines' numeric keys
 * before anything is sent: a typo must not pass silently.
 */
import { readFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import type { Axis, LineAxes } from "../schema/axes.ts";
import { GATE_OPS, type Gate, type GateOp, type ScopeClause } from "../schema/gate.ts";
import { isGateMetric } from "./metrics.ts";
import { canonicalMetricName } from "../schema/metric-name.ts";
import { KEYS } from "../schema/key-table.ts";

/** The names a scope may use for each axis. */
const AXIS_NAMES: Record<string, Axis> = {
  pct: "shared_prefix_pct",
  shared_prefix_pct: "shared_prefix_pct",
  working_set: "working_set",
  request_rate: "request_rate",
  round: "round",
  probe: "probe",
};

const NUMBER = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`;
const OP = "<=|>=|==|!=|=|<|>";
const SCOPE = `@([a-z_]+)(${OP})(${NUMBER}|inf)`;
const GATE_RE = new RegExp(`^([a-z0-9_]+)(${OP})(${NUMBER})(%?)((?:${SCOPE})*)$`);
const SCOPE_RE = new RegExp(SCOPE, "g");

/** `=` reads as `==` (`@pct=50`). */
const normalizeOp = (op: string): GateOp => (op === "=" ? "==" : (op as GateOp));

function parseScope(text: string, where: string): ScopeClause[] {
  const clauses: ScopeClause[] = [];
  for (const [, name, op, value] of text.matchAll(SCOPE_RE) as IterableIterator<[string, string, string, string]>) {
    const axis = AXIS_NAMES[name];
    if (axis === undefined) throw new UsageError(`${where}: @${name} is not an axis of a line (one of @${Object.keys(AXIS_NAMES).join(", @")})`);
    const n = value === "inf" ? Infinity : Number(value);
    if (axis === "shared_prefix_pct" && (n < 0 || n > 100)) throw new UsageError(`${where}: @${name} ${n} is outside [0, 100]`);
    clauses.push({ axis, op: normalizeOp(op), value: n });
  }
  return clauses;
}

/** Parses one gate; `source` names where it came from (`--gate`, `--gates-file f.txt line 3`) in errors. */
export function parseGate(text: string, source = "--gate"): Gate {
  const expr = text.replace(/\s+/g, "");
  const where = `${source} "${text}"`;
  const m = GATE_RE.exec(expr);
  if (m === null) {
    throw new UsageError(
      `${where}: expected METRIC OP VALUE with OP one of ${GATE_OPS.join(" ")} and optional @pct, @working_set, @request_rate or @round scopes, ` +
        "e.g. p99_ttft_ms<=800 or output_throughput>=1500@pct>=90",
    );
  }
  const [, written, op, digits, percent, scopeText] = m as unknown as [string, string, string, string, string, string];
  const metric = canonicalMetricName(written, isGateMetric);
  if (!isGateMetric(metric)) {
    throw new UsageError(
      `${where}: ${metric} is not a numeric key of a pct or round line (e.g. p99_ttft_ms, mean_itl_ms, output_throughput, failed, cached_tokens_mismatched)`,
    );
  }
  if (op === "=") throw new UsageError(`${where}: use == to compare a metric (= is only for a @ scope)`);
  const value = ratioValue(metric, Number(digits), percent === "%", where);
  return { expr, metric, op: normalizeOp(op), value, scope: parseScope(scopeText, where), source: `${source} "${expr}"` };
}

/** Ratio keys that are a share, within [0, 1] (routing_imbalance is a ratio too, but 1 and above). */
const SHARE = /_hit_(ratio|rate)$|^loss_[a-z]+_ratio$/;

/**
 * A gate's value is in its key's unit. A relative value takes its percent sign as in every flag (`45%`), and a share
 * may be written either way, as a fraction (`0.45`) or a percent (`45%`); a share outside [0, 1] is refused, since
 * the gate could never pass (`observed_hit_ratio>=45`) or never fail.
 */
function ratioValue(metric: string, n: number, percent: boolean, where: string): number {
  const unit = (KEYS as Record<string, { unit: string | null } | undefined>)[metric]?.unit ?? null;
  if (percent && unit !== "ratio") {
    throw new UsageError(`${where}: ${metric} is in ${unit ?? "no unit"}, not a ratio: write its value without a percent sign`);
  }
  const v = percent ? n / 100 : n;
  if (SHARE.test(metric) && (v < 0 || v > 1)) {
    const as = percent ? `${n}%` : String(n);
    const hint = !percent && n > 1 && n <= 100 ? ` (${n}% is ${n / 100})` : "";
    throw new UsageError(
      `${where}: ${metric} is a share in [0, 1] (0% to 100%), so ${as} can never be its value${hint}: write a fraction or a percent, e.g. 0.45 or 45%`,
    );
  }
  return v;
}

/** The gates of --gate (newline-joined when repeated) and of --gates-file. */
export function parseGates(gateFlag: string | undefined, gatesFile: string | undefined): Gate[] {
  const gates: Gate[] = [];
  // An empty --gate judges nothing: a gate that was meant and lost (an unset shell variable) is refused, not skipped.
  for (const text of gateFlag === undefined ? [] : gateFlag.split("\n")) {
    if (text.trim() === "") throw new UsageError('--gate "": an empty gate judges nothing (METRIC OP VALUE, e.g. p99_ttft_ms<=800)');
    gates.push(parseGate(text));
  }
  if (gatesFile !== undefined) gates.push(...readGatesFile(gatesFile));
  return gates;
}

/** One gate per line; blank lines and `#` comments are skipped. */
export function readGatesFile(path: string): Gate[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--gates-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const gates: Gate[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*/, "").trim();
    if (line !== "") gates.push(parseGate(line, `--gates-file ${path} line ${i + 1}`));
  }
  if (gates.length === 0) throw new UsageError(`--gates-file ${path}: no gate in it (one METRIC OP VALUE per line)`);
  return gates;
}

/** Whether `a OP b` holds; false when either is not a finite number (NaN), or a value is missing. */
export function holds(a: number, op: GateOp, b: number): boolean {
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "==":
      return a === b;
    case "!=":
      return a !== b && !Number.isNaN(a);
  }
}

/** Whether the gate applies to a line at these axes: every clause names an axis the line has, and holds there. */
export const gateApplies = (gate: Gate, axes: LineAxes): boolean =>
  gate.scope.every((c) => {
    const v = (axes as unknown as Record<string, number | undefined>)[c.axis];
    return typeof v === "number" && holds(v, c.op, c.value);
  });
