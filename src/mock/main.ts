/** `warmbench mock`: run the mock server in the foreground until SIGINT/SIGTERM. */
import type { MockOptions } from "./options.ts";
import { startMockServer } from "./server.ts";

/** Start the mock, print one "listening" line to stderr, stop and exit 0 on SIGINT/SIGTERM. */
export async function runMockServer(opts: MockOptions): Promise<never> {
  const server = await startMockServer(opts);
  process.stderr.write(`warmbench mock listening on ${server.url}\n`);
  return new Promise<never>(() => {
    let stopping = false;
    const shutdown = (): void => {
      if (stopping) return;
      stopping = true;
      void server.stop().finally(() => process.exit(0));
    };
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
  });
}
