/** `warmbench mock`: the mock server, from its own declarations in src/mock. */
import { parseMockOptions } from "../mock/options.ts";
import type { ParsedFlags } from "./command.ts";

export async function mockCommand(raw: ParsedFlags): Promise<number> {
  const { runMockServer } = await import("../mock/main.ts");
  return runMockServer(parseMockOptions(raw));
}
