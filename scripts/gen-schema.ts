/** Writes the generated schema files: the published JSON Schema and the docs' key reference (test/unit/schema checks both). */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { lineSchemaText, SCHEMA_PATH } from "../src/schema/document.ts";
import { keysReference, KEYS_DOC_PATH } from "../src/schema/reference.ts";

const root = join(import.meta.dir, "..");
for (const [path, text] of [
  [SCHEMA_PATH, lineSchemaText()],
  [KEYS_DOC_PATH, keysReference()],
] as const) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}
