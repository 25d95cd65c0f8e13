/**
 * The option types of the measuring commands. Each bound flag's field comes from its declaration (src/config/flags/,
 * DeclaredFields): written here is only what a command's parser makes of several flags together.
 */
import type { RoutePolicy } from "./route-policies.ts";
import type { Gate } from "../schema/gate.ts";
import type { DeclaredFields } from "./flags/declared-fields.ts";
import type { ClientDecl } from "./flags/index.ts";

/**
 * The fields run's flag declarations fill (config/flags/): each bound flag's field, typed by its declaration's parser
 * (a text parser's or null where the flag has no default). A flag added to run brings its field here by itself.
 */
export type DeclaredRunFields = DeclaredFields<ClientDecl, "run">;

/** What the server target's flags fill (cli/options.ts parseServerTarget), for every command that sends to a server. */
export interface TargetFields {
  /** Server base URL without a trailing slash. */
  baseUrl: string;
  /** `user:password` from --base-url's userinfo, sent as Basic authorization and never shown (baseUrl holds none); null: none. */
  urlCredentials: string | null;
  model: string;
  /** Tokenizer spec: a tokenizer.json path, a directory holding one, or a Hugging Face repo id. */
  tokenizer: string;
  /** Server-side wait passed as /flush_cache?timeout= (no flag). */
  flushServerTimeoutS: number;
}

/** What the measuring commands' parsers make of several flags together (cli/options.ts), where a command takes them. */
export interface RelatedFields {
  /** --workers: processes on this machine (this one included), or "auto"; null: one process. */
  workers: number | "auto" | null;
  /** --shard: this process's rank of a launcher-started run ("I/N"), or "auto" (Slurm); null: not sharded. */
  shard: { rank: number; size: number } | "auto" | null;
  /** --coordinator HOST:PORT where shard 0 listens; null: derived (Slurm) or not needed. */
  coordinator: { hostname: string; port: number } | null;
  /** --gate and --gates-file, in that order; checked as each point ends (exit code 6 when one fails). */
  gates: Gate[];
  /**
   * Several replicas (--base-url A,B,...): every one flushed, proven and warmed; each measured request routed by
   * `route` (the client routes). Absent with one URL; `baseUrl` is then the first.
   */
  replicas?: {
    urls: string[];
    /** The client's policy, or "router": a router at `via.url` routes (--replicas), the replicas are its control plane. */
    route: RoutePolicy | "router";
    via?: { url: string; keyHeader: string | null; servedHeader: string };
  };
  /**
   * --passport FILE: the cache geometry `warmbench passport` measured, used where the server states none (its page
   * size, its capacity) and where --server-cache does not say (whether answers are cached, when a prompt is).
   * Absent without the flag.
   */
  passport?: {
    file: string;
    pageSize: number | null;
    capacityTokens: number | null;
    /** Whether the server caches an answer with its prompt, as measured; null: not measured. */
    answersCached: boolean | null;
    /** When a prompt's pages enter the cache, as measured; null: not measured. */
    insertAt: "prefill" | "finish" | null;
    engine: string | null;
    serverVersion: string | null;
    baseUrl: string | null;
  };
  /** --check-fidelity: after each line, compare `sample` greedy answers warm against cold. Absent without the flag. */
  fidelity?: { sample: number; tieNats: number };
}

/**
 * Validated options of `warmbench run`; nothing below run.ts sees raw flags. Every bound flag's field comes from its
 * declaration (DeclaredRunFields); the fields here are what run's parser makes of several flags together, or of one
 * flag whose meaning depends on others.
 */
export interface RunOptions extends DeclaredRunFields, TargetFields, RelatedFields {
  /** Working-set sizes to run at every pct (K distinct shared prefixes in rotation); [1] is the script's sweep. */
  workingSets: number[];
  /**
   * --repeat N: each line measured N times (lines carry `repeat` 0..N-1). Absent without the flag, so neither the
   * lines nor the run's options echo change then.
   */
  repeat?: number;
  /** --repeat-until-cv X: a line's repeats stop once the CV of its gated metrics is below X (2 at least, --repeat at most). */
  repeatUntilCv?: number;
  /** --working-set auto: the sizes are chosen around the cache's capacity once it is known (before anything is measured). */
  workingSetAuto?: true;
}

/** Requests in flight at once: --max-concurrency, or every request of a line when it is 0 (the script's "unlimited"). */
export const inFlightLimit = (o: Pick<RunOptions, "maxConcurrency">, requests: number): number =>
  o.maxConcurrency === 0 ? Math.max(1, requests) : o.maxConcurrency;

/** Validated options of `warmbench multiturn`: its declarations' fields, the server target's, and what several flags make. */
export interface MultiturnOptions extends DeclaredFields<ClientDecl, "multiturn">, TargetFields, RelatedFields {
  /** New user tokens of round 0 (bench_multiturn's request-length); defaults to turnTokens. */
  firstTurnTokens: number;
}

/** Requests in flight at once: --max-concurrency, or every client when it is 0. */
export const multiturnInFlight = (o: Pick<MultiturnOptions, "maxConcurrency" | "numClients">): number =>
  o.maxConcurrency === 0 ? o.numClients : Math.min(o.maxConcurrency, o.numClients);

/** The Authorization of every request to the server: --api-key as a bearer token, else --base-url's userinfo as Basic. */
export function controlHeaders(o: Pick<RunOptions, "apiKey" | "urlCredentials">): Record<string, string> {
  if (o.apiKey) return { authorization: `Bearer ${o.apiKey}` };
  if (o.urlCredentials) return { authorization: `Basic ${Buffer.from(o.urlCredentials, "utf8").toString("base64")}` };
  return {};
}
