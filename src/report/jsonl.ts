/**
 * JSONL lines as the reference script writes them (Python json.dumps), appended atomically.
 *
 * Non-finite numbers: JSON has none, but the script writes `"request_rate": Infinity` because Python's
 * json.dumps emits the bare tokens Infinity, -Infinity and NaN (allow_nan=True). Tools that read the
 * script's files (pandas, json.loads) accept them, so we keep that: formatJsonl writes the bare tokens
 * (JSON.stringify would silently write null) and parseJsonlLine turns them back into numbers, touching
 * only tokens outside string literals.
 */

/** Non-ASCII escaped as \uXXXX, as Python's default ensure_ascii=True. */
function quoteString(s: string): string {
  return JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function formatNumber(n: number): string {
  if (Number.isFinite(n)) return JSON.stringify(n);
  if (Number.isNaN(n)) return "NaN";
  return n > 0 ? "Infinity" : "-Infinity";
}

/** Python json.dumps with its default separators ", " and ": "; undefined members are skipped like JSON.stringify. */
function formatValue(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "number":
      return formatNumber(value);
    case "string":
      return quoteString(value);
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "object":
      break;
    default:
      return "null";
  }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return formatValue(Array.from(value as unknown as ArrayLike<number>));
  }
  if (Array.isArray(value)) return `[${value.map((v) => formatValue(v)).join(", ")}]`;
  const members: string[] = [];
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    members.push(`${quoteString(key)}: ${formatValue(v)}`);
  }
  return `{${members.join(", ")}}`;
}

/** One JSONL line (with its "\n") for an object, byte-compatible with the script's json.dumps for strings and keys. */
export function formatJsonl(obj: unknown): string {
  return `${formatValue(obj)}\n`;
}

const NON_FINITE_TOKENS = ["-Infinity", "Infinity", "NaN"] as const;
type NonFiniteToken = (typeof NON_FINITE_TOKENS)[number];
const NON_FINITE_VALUES: Record<NonFiniteToken, number> = { "-Infinity": -Infinity, Infinity: Infinity, NaN: NaN };

/** Parses one JSONL line, accepting Python's bare Infinity, -Infinity and NaN. */
// biome-ignore lint/suspicious/noExplicitAny: a line of any kind; src narrows it (readers, the schema), the tests and the bench read the keys they know
export function parseJsonlLine(line: string): any {
  // Bare tokens become marker strings that the reviver turns back into numbers. A string value in the
  // line could equal the marker (even written with escapes), so the count of markers seen must equal the
  // count substituted; otherwise a longer marker is tried.
  for (let marker = "warmbench:non-finite:"; ; marker += "!") {
    let substituted = 0;
    let seen = 0;
    const text = replaceNonFiniteTokens(line, (token) => {
      substituted += 1;
      return JSON.stringify(marker + token);
    });
    const value: unknown = JSON.parse(text, (_key, v: unknown) => {
      if (typeof v !== "string" || !v.startsWith(marker)) return v;
      const token = v.slice(marker.length);
      if (!(token in NON_FINITE_VALUES)) return v;
      seen += 1;
      return NON_FINITE_VALUES[token as NonFiniteToken];
    });
    if (seen === substituted) return value;
  }
}

/** Replaces the bare tokens outside string literals. */
function replaceNonFiniteTokens(line: string, replacement: (token: NonFiniteToken) => string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += line[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    const token = inString ? undefined : NON_FINITE_TOKENS.find((t) => line.startsWith(t, i));
    if (token) {
      out += replacement(token);
      i += token.length - 1;
    } else {
      out += c;
    }
  }
  return out;
}
