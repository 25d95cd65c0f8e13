/** `warmbench schema`: prints the published JSON Schema (draft 2020-12) of the JSONL line format. */
import { EXIT } from "../errors.ts";
import { write } from "./command.ts";

export async function schemaCommand(): Promise<number> {
  const { lineSchemaText } = await import("../schema/document.ts");
  write(lineSchemaText());
  return EXIT.ok;
}
