/**
 * Gates: `METRIC OP VALUE [@pct OP PCT]`, e.g. `p99_ttft_ms<=800`, `failed==0`, `output_throughput>=1500@pct>=90`.
 * Parsed and checked against the pct line's numeric keys before anything is sent: a typo must not pass silently.
 */
import { readFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import { GATE_OPS, type Gate, type GateOp } from "../schema/gate.ts";
import { isNumericKey } from "../schema/keys.ts";

const NUMBER = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`;
const OP = "<=|>=|==|!=|=|<|>";
const GATE_RE = new RegExp(`^([a-z0-9_]+)(${OP})(${NUMBER})(?:@pct(${OP})(\\d+))?$`);

/** `=` reads as `==` (`@pct=50`). */
const normalizeOp = (op: string): GateOp => (op === "=" ? "==" : (op as GateOp));

/** Parses one gate; `source` names where it came from (`--gate`, `--gates-file f.txt line 3`) in errors. */
export function parseGate(text: string, source = "--gate"): Gate {
  const expr = text.replace(/\s+/g, "");
  const m = GATE_RE.exec(expr);
  if (m === null) {
    throw new UsageError(
      `${source} "${text}": expected METRIC OP VALUE with OP one of ${GATE_OPS.join(" ")} and an optional @pct scope, ` +
        "e.g. p99_ttft_ms<=800 or output_throughput>=1500@pct>=90",
    );
  }
  const [, metric, op, value, scopeOp, scopePct] = m as unknown as [string, string, string, string, string?, string?];
  if (!isNumericKey(metric)) {
    throw new UsageError(`${source} "${text}": ${metric} is not a numeric key of a pct line (e.g. p99_ttft_ms, mean_itl_ms, output_throughput, failed, cached_tokens_mismatched)`);
  }
  if (op === "=") throw new UsageError(`${source} "${text}": use == to compare a metric (= is only for the @pct scope)`);
  let scope: Gate["scope"] = null;
  if (scopeOp !== undefined && scopePct !== undefined) {
    const pct = Number(scopePct);
    if (pct > 100) throw new UsageError(`${source} "${text}": @pct ${pct} is outside [0, 100]`);
    scope = { op: normalizeOp(scopeOp), pct };
  }
  return { expr, metric, op: normalizeOp(op), value: Number(value), scope };
}

/** The gates of --gate (newline-joined when repeated) and of --gates-file. */
export function parseGates(gateFlag: string | undefined, gatesFile: string | undefined): Gate[] {
  const gates: Gate[] = [];
  for (const text of (gateFlag ?? "").split("\n")) if (text.trim() !== "") gates.push(parseGate(text));
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

/** Whether the gate applies to a pct. */
export const gateApplies = (gate: Gate, pct: number): boolean => gate.scope === null || holds(pct, gate.scope.op, gate.scope.pct);
