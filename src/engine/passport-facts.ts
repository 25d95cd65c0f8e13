/** A server's profile completed by a passport (--passport): what the server does not state, the passport measured. */
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import type { ServerProfile } from "../backends/types.ts";

/** What the server does not state, a passport measured (--passport): its page size, its cache capacity. */
export function withPassport(server: ServerProfile, passport: RunOptions["passport"]): ServerProfile {
  if (passport === undefined) return server;
  const out = { ...server, info: { ...server.info } };
  if (server.pageSizeSource === "backend default" && passport.pageSize !== null) {
    out.pageSize = passport.pageSize;
    out.pageSizeSource = "passport";
    // The guess the preflight warned about is replaced by a measurement.
    out.warnings = server.warnings.filter((w) => !/page size unknown/i.test(w));
    log.info(`Page size ${passport.pageSize} from the passport ${passport.file} (the server states none)`);
  }
  if (server.info.cacheCapacityTokens === null && passport.capacityTokens !== null) {
    out.info.cacheCapacityTokens = passport.capacityTokens;
    log.info(`Cache capacity ${passport.capacityTokens} tokens from the passport ${passport.file} (the server states none)`);
  }
  return out;
}

