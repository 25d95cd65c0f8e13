/** `warmbench schema`: prints the published JSON Schema (draft 2020-12) of the JSONL line format. */
import { EXIT } from "../errors.ts";
import { warmbenchCommand, write } from "./command.ts";

export const schemaCommand = warmbenchCommand("schema", "Print the JSON Schema (draft 2020-12) of the JSONL line format", async () => {
  const { lineSchemaText } = await import("../schema/document.ts");
  write(lineSchemaText());
  return EXIT.ok;
});
