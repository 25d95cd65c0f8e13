/** The schema layer: the Point model, the key table and the published JSON Schema. Imports nothing outside itself. */
export * from "./axes.ts";
export * from "./document.ts";
export * from "./keys.ts";
export * from "./lines.ts";
export * from "./nested.ts";
export { NON_FINITE, type JsonSchema } from "./shape.ts";
