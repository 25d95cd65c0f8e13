/**
 * Checks parsed JSONL lines against the published JSON Schema (schema/warmbench-line.schema.json) with ajv, a standard
 * validator, and their key order against the Point model's (the schema cannot say order; the byte format does).
 */
import Ajv2020 from "ajv/dist/2020.js";
import schema from "../../schema/warmbench-line.schema.json";
import { KEYS_OF } from "../../src/schema/lines.ts";

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(schema);

/** Each kind's own branch, for errors that speak of the kind the line claims to be (a union's errors list both). */
const branch = (name: string) => ajv.getSchema(`${schema.$id}#/$defs/${name}`)!;
const BRANCHES = { sweep: branch("sweep_line"), round: branch("round_line"), capacity: branch("capacity_line") };

/** Every way `line` breaks the schema or the key order, as readable lines (none when it conforms). */
export function schemaProblems(line: Record<string, unknown>): string[] {
  const kind = line.type === "round" || line.type === "capacity" ? line.type : "sweep";
  const problems: string[] = [];
  const own = BRANCHES[kind];
  const fits = own(line);
  if (!validate(line) || !fits) {
    for (const e of own.errors ?? validate.errors ?? []) {
      const extra = e.keyword === "additionalProperties" ? `: ${(e.params as { additionalProperty: string }).additionalProperty}` : "";
      const missing = e.keyword === "required" ? `: ${(e.params as { missingProperty: string }).missingProperty}` : "";
      problems.push(`${e.instancePath || "line"} ${e.message}${extra}${missing}`);
    }
  }
  const order = (KEYS_OF[kind] as readonly string[]).filter((k) => k in line);
  const actual = Object.keys(line).filter((k) => order.includes(k));
  if (actual.join(",") !== order.join(",")) problems.push(`line: keys out of order (${actual.find((k, i) => k !== order[i])} at the wrong place)`);
  return problems;
}

/** Throws, naming the file and line, when a results line breaks the schema. */
export function expectSchemaValid(line: Record<string, unknown>, where: string): void {
  const problems = schemaProblems(line);
  if (problems.length > 0) throw new Error(`${where}: does not match ${"schema/warmbench-line.schema.json"}:\n  ${problems.join("\n  ")}`);
}
