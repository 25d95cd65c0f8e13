/** A server's profile completed by a passport (--passport): what the server does not state, the passport measured. */
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import type { ServerProfile } from "../backends/types.ts";

/** What the server does not state, a passport measured (--passport): its page size, its cache capacity (and, for the cache model, whether answers are cached: engine/model-behaviour.ts). */
export function withPassport(server: ServerProfile, passport: RunOptions["passport"], baseUrl: string): ServerProfile {
  if (passport === undefined) return server;
  // Another engine or build has another geometry: its figures would be read as this server's.
  const engine = server.engine?.name ?? null;
  if (passport.engine !== null && engine !== null && passport.engine !== engine) {
    throw new UsageError(`--passport ${passport.file}: measured on ${passport.engine}, but the server is ${engine}`);
  }
  // A version stated on one side only is no match either: the figures may be another build's.
  if (passport.serverVersion !== server.info.version) {
    throw new UsageError(
      `--passport ${passport.file}: measured on server version ${passport.serverVersion ?? "(none stated)"}, but the server is ${server.info.version ?? "(none stated)"} (measure it again)`,
    );
  }
  if (passport.baseUrl !== null && passport.baseUrl !== baseUrl) {
    log.warn(
      `--passport ${passport.file}: measured at ${passport.baseUrl}, used for ${baseUrl} (the same engine and version; its figures hold if its flags are the same)`,
    );
  }
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
  if (passport.answersCached !== null) {
    log.info(
      `Answers ${passport.answersCached ? "cached" : "not cached"} with their prompts, from the passport ${passport.file} (the cache model's, unless --server-cache says)`,
    );
  }
  if (passport.insertAt !== null) {
    log.info(
      `A prompt cached at ${passport.insertAt === "prefill" ? "its prefill's end" : "its finish"}, from the passport ${passport.file} (the cache model's, unless --server-cache says)`,
    );
  }
  return out;
}
