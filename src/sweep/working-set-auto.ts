/**
 * `--working-set auto`: working-set sizes around the cache's capacity C (its /server_info, or --passport), so the
 * sweep shows the knee without the user knowing C: with P the largest pct's shared prefix, the sizes whose prefixes
 * fill half, all and twice the cache (round(f x C / P) for f = 0.5, 1, 2), with 1 always in. Chosen after the
 * preflight, before anything is measured; a server that states no capacity and no passport is a usage error.
 */
import { UsageError } from "../errors.ts";
import type { RunOptions } from "../config/options.ts";
import type { ServerProfile } from "../backends/types.ts";
import { splitPrompt } from "../workload/prompts.ts";

const AUTO_FILLS = [0.5, 1, 2] as const;

export function autoWorkingSets(opts: Pick<RunOptions, "totalTokens" | "pcts">, server: Pick<ServerProfile, "info">): number[] {
  const capacity = server.info.cacheCapacityTokens;
  if (capacity === null) {
    throw new UsageError(
      "--working-set auto: the server states no cache capacity; measure one (warmbench passport --output-file F) and pass --passport F, or give the sizes",
    );
  }
  const prefix = splitPrompt(opts.totalTokens, Math.max(...opts.pcts)).prefixLen;
  if (prefix === 0) throw new UsageError("--working-set auto: the pcts share no prefix, so there is nothing to rotate");
  const sizes = new Set<number>([1, ...AUTO_FILLS.map((f) => Math.max(1, Math.round((f * capacity) / prefix)))]);
  return [...sizes].sort((a, b) => a - b);
}
