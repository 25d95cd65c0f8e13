/** `warmbench mock`: run the mock server in the foreground until SIGINT/SIGTERM (or --exit-after). */
import { UsageError } from "../errors.ts";
import type { MockOptions } from "./options.ts";
import { startMockServer } from "./server.ts";
import { MockTokenizerError } from "./chat-template.ts";

/**
 * Set by `warmbench demo` for its mock child: a terminal's Ctrl-C reaches the whole process group, but the child
 * must live until the client has written what it measured, so it ignores SIGINT, stops on SIGTERM, and exits when
 * its stdin (the parent's pipe) closes.
 */
export const MOCK_CHILD_ENV = "WARMBENCH_MOCK_CHILD";

/** Start the mock, print one "listening" line to stderr; exit 0 once it stops (signal, parent gone) or dies (--exit-after). */
export async function runMockServer(opts: MockOptions): Promise<never> {
  let server: Awaited<ReturnType<typeof startMockServer>>;
  try {
    server = await startMockServer(opts);
  } catch (err) {
    if (err instanceof MockTokenizerError) throw new UsageError(err.message);
    // Bun's own words for a taken port or a host it cannot bind ("Is port N in use?", ENOTTY): a usage error, exit 2.
    const why = (err as Error)?.message ?? String(err);
    throw new UsageError(`--host ${opts.host} --port ${opts.port}: cannot listen there (${why.replace(/^Failed to start server\. /, "")})`);
  }
  process.stderr.write(`warmbench mock listening on ${server.url}\n`);
  return new Promise<never>(() => {
    void server.closed.then(() => process.exit(0));
    const shutdown = (): void => void server.stop();
    process.on("SIGTERM", shutdown);
    if (process.env[MOCK_CHILD_ENV] === "1") {
      process.on("SIGINT", () => {});
      process.stdin.on("end", shutdown);
      process.stdin.on("close", shutdown);
      process.stdin.resume();
    } else {
      process.on("SIGINT", shutdown);
    }
  });
}
