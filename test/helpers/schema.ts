/**
 * Checks a parsed JSONL line against test/fixtures/schema/pct-line.json (oha pins its JSON output the same way):
 * exactly the listed keys, in order, each of an allowed JSON type; "?" marks a key that may be absent.
 */
import schema from "../fixtures/schema/pct-line.json";

type Spec = [string, string, Spec[]?];

/** The JSON type of a value as the schema names it (non-finite numbers count as numbers: Python writes them). */
export function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "string" && /^-?Infinity$|^NaN$/.test(v)) return "number";
  return typeof v;
}

/** Every mismatch between `value` and the schema, as readable lines (none when it conforms). */
export function schemaProblems(value: Record<string, unknown>, specs: Spec[] = schema.keys as Spec[], at = ""): string[] {
  const problems: string[] = [];
  const expected = specs.filter(([key, type]) => !(type.endsWith("?") && !(key in value))).map(([key]) => key);
  const actual = Object.keys(value);
  if (expected.join(",") !== actual.join(",")) {
    const extra = actual.filter((k) => !expected.includes(k));
    const missing = expected.filter((k) => !actual.includes(k));
    problems.push(`${at || "line"}: keys differ (extra: ${extra.join(", ") || "none"}; missing: ${missing.join(", ") || "none"}; or order)`);
  }
  for (const [key, typeSpec, nested] of specs) {
    if (!(key in value)) continue;
    const allowed = typeSpec.replace(/\?$/, "").split("|");
    const v = value[key];
    const t = jsonType(v);
    if (!allowed.includes(t)) problems.push(`${at}${key}: ${t}, expected ${typeSpec}`);
    else if (nested && t === "object") problems.push(...schemaProblems(v as Record<string, unknown>, nested, `${at}${key}.`));
  }
  return problems;
}
