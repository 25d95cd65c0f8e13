/**
 * Whether a results line may be read: every line of the current schema_version is checked against the published JSON
 * Schema (schema/document.ts, by a validator of the few keywords it uses: the binary bundles no ajv), and every line,
 * of any version, against the consistency rules a schema cannot say. A line of an older version (0.1-0.3) is judged
 * only on what it holds; one of a newer version is refused (this build does not know what its keys mean).
 */
import { KEYS, type KeyDef } from "../schema/key-table.ts";
import { lineSchemaDocument } from "../schema/document.ts";
import { SCHEMA_VERSION } from "../schema/lines.ts";
import type { JsonSchema } from "../schema/shape.ts";

/** The rules a line can break, as the error line names them. */
export const LINE_RULES = {
  schema: "the published JSON Schema (warmbench schema)",
  newer: "a schema_version this build knows",
  finite: "finite numbers",
  "non-negative": "non-negative counts and latencies",
  sent: "completed + failed = sent",
  evidence: "the evidence block agreeing with the line",
  "evidence-missing": "an evidence block in every line since 0.4",
} as const;
type LineRule = keyof typeof LINE_RULES;

export interface LineProblem {
  rule: LineRule;
  /** The key (a dotted path into nested objects) and what is wrong with it. */
  text: string;
}

/** Keys that may hold a non-finite number where the writer puts one (the key table's docs say when). */
const MAY_BE_NON_FINITE = new Set(["request_rate", "burstiness", "ci95_low", "ci95_high"]);

/** Units whose quantities are never negative; keys that are differences are left out. */
const NON_NEGATIVE_UNITS = new Set([
  "ms",
  "s",
  "requests",
  "tokens",
  "req/s",
  "tok/s",
  "samples",
  "attempts",
  "probes",
  "rounds",
  "clients",
  "turns",
  "prompts",
]);
const SIGNED_KEYS = new Set(["ledger_unexplained_tokens", "schedule_lag_mean_ms", "schedule_lag_median_ms", "schedule_lag_p90_ms", "schedule_lag_p99_ms"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const keyDef = (name: string): KeyDef | undefined => (Object.hasOwn(KEYS, name) ? (KEYS as Record<string, KeyDef>)[name] : undefined);
const join = (path: string, key: string | number): string => (path === "" ? String(key) : typeof key === "number" ? `${path}[${key}]` : `${path}.${key}`);

/** A value as the schema sees it: Python's non-finite tokens read as the strings the schema names. */
function asJson(v: unknown): unknown {
  if (typeof v !== "number" || Number.isFinite(v)) return v;
  return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
}

function shown(v: unknown): string {
  if (typeof v === "number") return String(v);
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

let document: JsonSchema | null = null;
const root = (): JsonSchema => (document ??= lineSchemaDocument());

function resolve(schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.replace("#/$defs/", "");
  return (root().$defs as Record<string, JsonSchema>)[name]!;
}

const TYPE_WORDS: Record<string, string> = {
  number: "a number",
  integer: "an integer",
  string: "a string",
  boolean: "true or false",
  null: "null",
  object: "an object",
  array: "an array",
};

/** What a schema expects, in words. */
function expected(raw: JsonSchema): string {
  if (raw.$ref === "#/$defs/number") return "a number";
  const schema = resolve(raw);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(expected).join(" or ");
  if ("const" in schema) return shown(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(shown).join(", ")}`;
  if (typeof schema.type === "string") return TYPE_WORDS[schema.type] ?? schema.type;
  return "something else";
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case "number":
      return typeof v === "number";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "null":
      return v === null;
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    default:
      return typeof v === type;
  }
}

/** The first place `value` breaks `schema`, as "path: what is wrong", or null. */
function schemaProblem(value: unknown, raw: JsonSchema, path: string): string | null {
  const schema = resolve(raw);
  const v = asJson(value);
  const where = path === "" ? "the line" : path;
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives !== undefined) {
    const problems = alternatives.map((s) => schemaProblem(value, s, path));
    if (problems.some((p) => p === null)) return null;
    // The alternative of the value's own type says most; else say what was expected.
    const typed = alternatives.findIndex((s) => typeof resolve(s).type === "string" && typeMatches(resolve(s).type as string, v));
    return typed >= 0 ? problems[typed]! : `${where}: ${shown(value)} is not ${expected(schema)}`;
  }
  if ("const" in schema && v !== schema.const) return `${where}: ${shown(value)} is not ${shown(schema.const)}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(v)) return `${where}: ${shown(value)} is not ${expected(schema)}`;
  if (typeof schema.type === "string" && !typeMatches(schema.type, v)) return `${where}: ${shown(value)} is not ${expected(schema)}`;
  if (typeof schema.minimum === "number" && typeof v === "number" && v < schema.minimum) return `${where}: ${shown(value)} is below ${schema.minimum}`;
  if (Array.isArray(v)) {
    if (typeof schema.minItems === "number" && v.length < schema.minItems) return `${where}: fewer than ${schema.minItems} items`;
    if (typeof schema.maxItems === "number" && v.length > schema.maxItems) return `${where}: more than ${schema.maxItems} items`;
    const prefix = (schema.prefixItems ?? []) as JsonSchema[];
    for (let i = 0; i < v.length; i++) {
      const item = i < prefix.length ? prefix[i] : schema.items;
      if (item === false) return `${join(path, i)}: not expected (at most ${prefix.length} items)`;
      if (isObject(item)) {
        const p = schemaProblem(v[i], item, join(path, i));
        if (p !== null) return p;
      }
    }
  }
  if (isObject(v)) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema.required ?? []) as string[]) {
      if (!(name in v)) return `${join(path, name)}: missing`;
    }
    for (const [name, item] of Object.entries(v)) {
      const s = Object.hasOwn(properties, name) ? properties[name] : schema.additionalProperties;
      if (s === false) return `${join(path, name)}: not a key of this line's kind`;
      if (isObject(s)) {
        const p = schemaProblem(item, s, join(path, name));
        if (p !== null) return p;
      }
    }
  }
  return null;
}

/** The schema of a line's kind: a capacity line and a round line say so; anything else is a sweep line. */
function kindSchema(line: Record<string, unknown>): JsonSchema {
  const kind = line.type === "capacity" ? "capacity_line" : line.type === "round" ? "round_line" : "sweep_line";
  return (root().$defs as Record<string, JsonSchema>)[kind]!;
}

/** The first non-finite number outside the keys that may hold one. */
function nonFinite(v: unknown, path: string, key: string): string | null {
  if (typeof v === "number") {
    // A gate's value is the line's own value of its key, which is checked where it stands (a gate on request_rate: Infinity).
    const allowed = MAY_BE_NON_FINITE.has(key) || /^gates\[\d+\]\.value$/.test(path);
    return Number.isFinite(v) || allowed ? null : `${path}: ${v} is not a finite number`;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = nonFinite(v[i], join(path, i), key);
      if (p !== null) return p;
    }
  } else if (isObject(v)) {
    for (const [k, item] of Object.entries(v)) {
      const p = nonFinite(item, join(path, k), k);
      if (p !== null) return p;
    }
  }
  return null;
}

/** A line of an older version: the numeric keys it holds must still be numbers (or null). */
function legacyTypes(line: Record<string, unknown>): string | null {
  for (const [name, v] of Object.entries(line)) {
    const def = keyDef(name);
    if (def?.shape.numeric && v !== null && typeof v !== "number") return `${name}: ${shown(v)} is not a number`;
  }
  return null;
}

function negative(line: Record<string, unknown>): string | null {
  for (const [name, v] of Object.entries(line)) {
    const def = keyDef(name);
    if (def === undefined || def.unit === null || !NON_NEGATIVE_UNITS.has(def.unit) || SIGNED_KEYS.has(name)) continue;
    if (typeof v === "number" && v < 0) return `${name}: ${v} is negative (a count of ${def.unit} cannot be)`;
  }
  const ev = line.evidence;
  if (isObject(ev)) {
    for (const part of ["samples", "requests"] as const) {
      const counts = ev[part];
      if (!isObject(counts)) continue;
      for (const [k, v] of Object.entries(counts)) {
        if (typeof v === "number" && v < 0) return `evidence.${part}.${k}: ${v} is negative`;
      }
    }
  }
  return null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function evidenceDisagrees(line: Record<string, unknown>): string | null {
  const ev = line.evidence;
  if (!isObject(ev)) return null;
  const requests = isObject(ev.requests) ? ev.requests : {};
  const sent = num(line.sent);
  const completed = num(line.completed);
  const evSent = num(requests.sent);
  const evFinished = num(requests.finished);
  if (sent !== null && evSent !== null && sent !== evSent) return `evidence.requests.sent: ${evSent}, but the line's sent is ${sent}`;
  if (completed !== null && evFinished !== null && completed !== evFinished) {
    return `evidence.requests.finished: ${evFinished}, but the line's completed is ${completed}`;
  }
  if (evSent !== null && evFinished !== null && evFinished > evSent) return `evidence.requests.finished: ${evFinished} is more than the ${evSent} sent`;
  if (typeof line.client_saturated === "boolean" && typeof ev.client_healthy === "boolean" && ev.client_healthy === line.client_saturated) {
    return `evidence.client_healthy: ${ev.client_healthy}, but the line's client_saturated is ${line.client_saturated}`;
  }
  return null;
}

/** "0.4.0" -> [0, 4]; null for anything else. */
function versionOf(v: unknown): [number, number] | null {
  const m = typeof v === "string" ? /^(\d+)\.(\d+)/.exec(v) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** Whether the line was written by 0.4 or later (a merged line says its first input's). */
function since04(line: Record<string, unknown>): boolean {
  const v = versionOf(line.warmbench_version);
  return v !== null && (v[0] > 0 || v[1] >= 4);
}

/**
 * The first rule a results line breaks, or null. `line` is a parsed results line (a sweep, round or capacity line:
 * 0.1's run and summary lines and lines of no results kind are not asked).
 */
export function lineProblem(line: Record<string, unknown>): LineProblem | null {
  const version = line.schema_version;
  if (typeof version === "number" && version > SCHEMA_VERSION) {
    return { rule: "newer", text: `schema_version: ${version} is newer than this build reads (${SCHEMA_VERSION}): read it with a newer warmbench` };
  }
  // 0.3 wrote schema_version 2 too, before keys it now requires: only a 0.4+ line is held to the whole schema.
  const current = version === SCHEMA_VERSION && since04(line);
  const typeProblem = current ? schemaProblem(line, kindSchema(line), "") : legacyTypes(line);
  if (typeProblem !== null) return { rule: "schema", text: typeProblem };
  const infinite = nonFinite(line, "", "");
  if (infinite !== null) return { rule: "finite", text: infinite };
  const below = negative(line);
  if (below !== null) return { rule: "non-negative", text: below };
  const [sent, completed, failed] = [num(line.sent), num(line.completed), num(line.failed)];
  if (sent !== null && completed !== null && failed !== null && completed + failed !== sent) {
    return { rule: "sent", text: `completed ${completed} + failed ${failed} is not the ${sent} sent` };
  }
  if (line.evidence === undefined && line.type !== "capacity" && since04(line)) {
    return {
      rule: "evidence-missing",
      text: `evidence: missing, but the line says warmbench ${String(line.warmbench_version)}, schema_version ${String(version)}`,
    };
  }
  const disagrees = evidenceDisagrees(line);
  if (disagrees !== null) return { rule: "evidence", text: disagrees };
  return null;
}
