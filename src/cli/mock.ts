/** `warmbench mock`: the mock server, from its own declarations in src/mock. */
import { parseMockOptions } from "../mock/options.ts";
import { warmbenchCommand } from "./command.ts";

export const mockCommand = warmbenchCommand("mock", "Start an SGLang-compatible mock server (no GPU needed)", async (raw) => {
  const { runMockServer } = await import("../mock/main.ts");
  return runMockServer(parseMockOptions(raw));
});
