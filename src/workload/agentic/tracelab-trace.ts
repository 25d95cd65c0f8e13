/**
 * TraceLab's runner CSV (uw-syfi/TraceLab `replay/`): one row per LLM round, columns `session_id` (or `id`),
 * `arrival_time` (ms), `round_idx`, `prefix_len`, `input_len`, `output_len`, `tool_wait_after_ms` (ms). A round's
 * prompt is `prefix_len` tokens the session already sent followed by `input_len` new ones; the file has no hash ids
 * and no subagents, so each session becomes a root chain whose blocks are invented: block j of a round keeps the
 * previous round's id while it lies wholly inside the shared prefix and the previous prompt, and is new otherwise
 * (the prefix's share of the previous answer is not known to be the same tokens, so it is counted new: the model's
 * ceiling is then a lower bound there). `tool_wait_after_ms` becomes the next round's think time.
 * Checked before anything is sent: a bad row is one UsageError naming the file and line (exit 2).
 */
import { UsageError } from "../../errors.ts";
import type { AgenticCall, AgenticTrace } from "./session-tree.ts";

const NEEDED = ["arrival_time", "round_idx", "prefix_len", "input_len", "output_len", "tool_wait_after_ms"] as const;

interface Row {
  line: number;
  session: string;
  arrivalMs: number;
  round: number;
  prefix: number;
  input: number;
  output: number;
  waitAfterMs: number;
}

/** Parses and checks a TraceLab runner CSV; `blockSize` is the size of the invented blocks. */
export function parseTraceLabCsv(path: string, text: string, blockSize: number): AgenticTrace[] {
  const lines = text.split("\n");
  const header = (lines[0] ?? "")
    .trim()
    .split(",")
    .map((h) => h.trim());
  const sessionCol = header.indexOf("session_id") >= 0 ? header.indexOf("session_id") : header.indexOf("id");
  if (sessionCol < 0) throw new UsageError(`${path}:1: TraceLab CSV header has no "session_id" (or "id") column`);
  const cols = Object.fromEntries(NEEDED.map((name) => [name, header.indexOf(name)])) as Record<(typeof NEEDED)[number], number>;
  for (const name of NEEDED) if (cols[name] < 0) throw new UsageError(`${path}:1: TraceLab CSV header has no "${name}" column`);
  const rows: Row[] = [];
  lines.forEach((raw, i) => {
    if (i === 0 || raw.trim() === "") return;
    const line = i + 1;
    const cells = raw.split(",").map((c) => c.trim());
    const num = (name: (typeof NEEDED)[number], min: number): number => {
      const cell = cells[cols[name]];
      const v = cell === undefined || cell === "" ? Number.NaN : Number(cell);
      if (!Number.isFinite(v))
        throw new UsageError(
          `${path}:${line}: "${name}" must be a number, got ${cell === undefined || cell === "" ? "nothing (missing)" : JSON.stringify(cell)}`,
        );
      if (v < min)
        throw new UsageError(`${path}:${line}: "${name}" ${v} is below ${min}${name.endsWith("_ms") || name === "arrival_time" ? " (a negative delay)" : ""}`);
      return v;
    };
    const session = cells[sessionCol];
    if (session === undefined || session === "") throw new UsageError(`${path}:${line}: "${header[sessionCol]}" is missing`);
    const input = num("input_len", 0);
    const prefix = num("prefix_len", 0);
    if (!Number.isSafeInteger(input) || !Number.isSafeInteger(prefix) || input + prefix < 1) {
      throw new UsageError(`${path}:${line}: "prefix_len" + "input_len" must be a whole number of tokens >= 1`);
    }
    rows.push({
      line,
      session,
      arrivalMs: num("arrival_time", 0),
      round: num("round_idx", 0),
      prefix,
      input,
      output: Math.round(num("output_len", 0)),
      waitAfterMs: num("tool_wait_after_ms", 0),
    });
  });
  if (rows.length === 0) throw new UsageError(`${path}: no round in the trace`);
  const bySession = new Map<string, Row[]>();
  for (const r of rows) {
    const list = bySession.get(r.session);
    if (list === undefined) bySession.set(r.session, [r]);
    else list.push(r);
  }
  return [...bySession.entries()].map(([id, list]) => sessionTrace(path, id, list, blockSize));
}

function sessionTrace(path: string, id: string, rows: Row[], blockSize: number): AgenticTrace {
  const sorted = [...rows].sort((a, b) => a.round - b.round || a.line - b.line);
  const t0 = sorted[0]!.arrivalMs;
  let nextId = 0;
  let prev: { ids: number[]; length: number } = { ids: [], length: 0 };
  const steps: AgenticCall[] = sorted.map((r, k) => {
    const length = r.prefix + r.input;
    const shared = Math.min(r.prefix, prev.length);
    const ids: number[] = [];
    for (let j = 0; j < Math.floor(length / blockSize); j++) ids.push((j + 1) * blockSize <= shared ? prev.ids[j]! : nextId++);
    if (k > 0 && r.arrivalMs < sorted[k - 1]!.arrivalMs) {
      throw new UsageError(
        `${path}:${r.line}: "arrival_time" ${r.arrivalMs} ms is before round ${sorted[k - 1]!.round}'s ${sorted[k - 1]!.arrivalMs} ms (a negative delay)`,
      );
    }
    prev = { ids, length };
    return {
      kind: "call",
      line: r.line,
      at: `round ${r.round}`,
      tS: (r.arrivalMs - t0) / 1000,
      inputLength: length,
      outputLength: r.output,
      hashIds: ids,
      thinkTimeS: k === 0 ? 0 : sorted[k - 1]!.waitAfterMs / 1000,
      apiTimeS: null,
    };
  });
  return { path, line: sorted[0]!.line, id, blockSize, hashIdScope: "local", steps };
}
