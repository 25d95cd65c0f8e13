/** What produced a line (a pct line, a multi-turn round line): the same keys, from the run's context, in both. */
import type { ServerProfile } from "../backends/types.ts";
import type { Provenance } from "../metrics/sweep-line.ts";
import type { RunInfo } from "../schema/nested.ts";
import type { RunOptions } from "../config/options.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";

/** The context a measuring command has (the sweep's, or a multi-turn run's). */
export interface ProvenanceContext {
  opts: Pick<RunOptions, "model" | "seed" | "baseUrl">;
  server: Pick<ServerProfile, "model" | "info" | "textMode">;
  tokenizer: Pick<LoadedTokenizer, "path" | "population">;
  run: Pick<RunInfo, "warmbench_version">;
}

export function provenance(ctx: ProvenanceContext, startedAt: string): Provenance {
  const { opts, server, tokenizer } = ctx;
  return {
    warmbench_version: ctx.run.warmbench_version,
    started_at: startedAt,
    model: server.model ?? opts.model,
    tokenizer: tokenizer.path,
    population_size: tokenizer.population.length,
    seed: opts.seed.toString(),
    base_url: opts.baseUrl,
    server_version: server.info.version,
    text_mode: server.textMode,
  };
}
