/** The published JSON Schema (draft 2020-12) of a warmbench JSONL line, generated from the key table. */
import { KEYS, type KeyDef, type KeyName } from "./key-table.ts";
import { KEYS_OF, OPTIONAL_KEYS, SCHEMA_VERSION } from "./lines.ts";
import type { LineKind } from "./key-table.ts";
import { NON_FINITE, type JsonSchema } from "./shape.ts";

/** Where the committed copy lives (and what `warmbench schema` prints). */
export const SCHEMA_PATH = "schema/warmbench-line.schema.json";

/** A key's shape and meaning in a line of `kind`. */
export function keyIn(kind: LineKind, name: KeyName): { shape: KeyDef["shape"]; doc: string; unit: string | null } {
  const def = KEYS[name] as KeyDef;
  const round = kind === "round";
  return { shape: (round && def.roundShape) || def.shape, doc: (round && def.roundDoc) || def.doc, unit: def.unit };
}

const withUnit = (doc: string, unit: string | null) => (unit === null ? doc : `${doc} Unit: ${unit}.`);

function lineSchema(kind: LineKind, title: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of KEYS_OF[kind]) {
    const { shape, doc, unit } = keyIn(kind, name);
    properties[name] = { ...shape.json, description: withUnit(doc, unit) };
  }
  properties.schema_version = { const: SCHEMA_VERSION, description: properties.schema_version!.description };
  const optional: readonly string[] = OPTIONAL_KEYS[kind];
  return {
    title,
    type: "object",
    properties,
    required: KEYS_OF[kind].filter((name) => !optional.includes(name)),
    additionalProperties: false,
  };
}

/** The whole document: a line is a sweep line or a round line (a round line says "type": "round"). */
export function lineSchemaDocument(): JsonSchema {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://warmbench.dev/schema/warmbench-line.schema.json",
    title: `warmbench JSONL line (schema_version ${SCHEMA_VERSION})`,
    description:
      "One line of a warmbench results file: a sweep line (one per pct, working set and request rate; the reference script's " +
      "keys first, in its order), a multi-turn round line, or a capacity search's result per pct. Keys are written in the order listed. Non-finite numbers: " +
      "like Python's json.dumps, the file holds the bare tokens Infinity, -Infinity and NaN (e.g. request_rate in a closed " +
      'loop), which are not JSON; a reader maps them to the strings "Infinity", "-Infinity" and "NaN" before validating ' +
      "(pandas and Python's json.loads read them as floats).",
    oneOf: [{ $ref: "#/$defs/sweep_line" }, { $ref: "#/$defs/round_line" }, { $ref: "#/$defs/capacity_line" }],
    $defs: {
      number: {
        description: "A float: a JSON number, or a non-finite value written as Python does (read as one of these strings).",
        anyOf: [{ type: "number" }, { enum: [...NON_FINITE] }],
      },
      sweep_line: lineSchema("sweep", "A sweep line: one (shared_prefix_pct, working_set, request_rate) cell"),
      round_line: lineSchema("round", "A multi-turn round line: one round of every conversation"),
      capacity_line: lineSchema("capacity", "A capacity line (warmbench capacity): one pct's search result, after its probes"),
    },
  };
}

/** The document as committed and printed: two-space JSON with a final newline. */
export const lineSchemaText = (): string => `${JSON.stringify(lineSchemaDocument(), null, 2)}\n`;
