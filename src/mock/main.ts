/** `warmbench mock`: run the mock server in the foreground until SIGINT/SIGTERM (or --exit-after). */
import type { MockOptions } from "./options.ts";
import { startMockServer } from "./server.ts";

/** Start the mock, print one "listening" line to stderr; exit 0 once it stops (SIGINT/SIGTERM) or dies (--exit-after). */
export async function runMockServer(opts: MockOptions): Promise<never> {
  const server = await startMockServer(opts);
  process.stderr.write(`warmbench mock listening on ${server.url}\n`);
  return new Promise<never>(() => {
    void server.closed.then(() => process.exit(0));
    const shutdown = (): void => void server.stop();
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
  });
}
