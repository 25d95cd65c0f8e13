/**
 * Parsing of the run's flags: raw citty strings in, validated options (src/config/options.ts) out. Every problem is
 * one UsageError naming the flag (exit 2), before anything is sent.
 */
import { replicaNamedTwice } from "../config/replica-identity.ts";
import { parsePassportFlag } from "./passport-file.ts";
import { parseBound } from "../config/flags/bound.ts";
import { ROUTE_POLICIES, ROUTING_KEY_PRESETS } from "../config/route-policies.ts";
import { FIDELITY_DEFAULTS } from "../config/fidelity-defaults.ts";
import { parseRelative } from "../config/relative.ts";
import { checkMemory } from "../config/bounds.ts";
import { sweepMemoryBytes } from "../config/memory-model.ts";
import { UsageError } from "../errors.ts";
import type { RunOptions } from "../config/options.ts";
import { ENDPOINTS, RUN_DEFAULTS } from "../config/defaults.ts";
import { endpointFor, ENGINES } from "../backends/index.ts";
import { parseCoordinatorFlag, parseShardFlag, parseWorkersFlag } from "../shard/placement.ts";
import { parseGates } from "../gates/parse.ts";
import { plannedSweepAxes, type LineAxes } from "../schema/axes.ts";
import type { Gate } from "../schema/gate.ts";
import { checkGatesMatchPlan, checkGatesMeasurable } from "../gates/plan.ts";
import { arrivalCount } from "../workload/arrivals.ts";
import { splitPrompt } from "../workload/prompts.ts";
import { oneOf, parseBaseUrl, parseIntFlag, parseNumberFlag, parseWorkingSets, str, type RawFlags } from "../config/flag-values.ts";

// The value parsers live in config/flag-values.ts, beside the declarations that carry them.

/** Turns raw `warmbench run` flags into RunOptions, or throws one UsageError naming the flag. */
export function parseRunOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env, command: "run" | "demo" = "run"): RunOptions {
  const d = RUN_DEFAULTS;
  // Every field of run's flags, parsed from its declaration (config/flags/bound.ts) and typed by it; what follows
  // relates several.
  const bound = parseBound(command, raw, env);
  const { backend, endpoint, totalTokens, pcts, numPrompts, maxConcurrency } = bound;
  if (backend !== "auto") {
    const resolved = endpointFor(ENGINES[backend], endpoint);
    if (!(ENDPOINTS as readonly string[]).includes(resolved)) throw new UsageError(`--endpoint ${endpoint}: ${resolved}`);
  }
  const target = parseServerTarget(raw, "", true);
  for (const pct of pcts) {
    if (pct > 0 && splitPrompt(totalTokens, pct).prefixLen === 0) {
      throw new UsageError(
        `--total-tokens ${totalTokens} is too small for --pcts ${pct}: the shared prefix would be ${totalTokens}*${pct}//100 = 0 tokens, ` +
          `so nothing is shared or warmed (use --total-tokens >= ${Math.ceil(100 / pct)} or drop that pct)`,
      );
    }
  }
  // auto: sizes around the cache's capacity, chosen once the server (or --passport) says it (sweep/working-set-auto.ts).
  const workingSetAuto = str(raw, "working-set") === "auto";
  const workingSets = workingSetAuto ? [1] : parseWorkingSets(str(raw, "working-set") ?? d.workingSet);
  if (endpoint === "chat" && workingSets.some((k) => k > 1)) {
    throw new UsageError(
      "--working-set above 1 with --endpoint chat: text prompts are checked against one shared prefix; use --endpoint completions for cache-pressure studies",
    );
  }
  checkLoad(raw, bound);
  const gates = parsePlannedGates(raw, plannedSweepAxes(pcts, workingSets, bound.requestRates));
  if (workingSetAuto) {
    const scoped = gates.find((g) => g.scope.some((c) => c.axis === "working_set"));
    if (scoped !== undefined)
      throw new UsageError(`${scoped.source}: --working-set auto chooses its sizes from the server's capacity, so a gate cannot name one; give the sizes`);
    if (endpoint === "chat")
      throw new UsageError("--working-set auto with --endpoint chat: text prompts are checked against one shared prefix; use --endpoint completions");
  }
  const placement = parsePlacementFlags(raw);
  if (workingSetAuto && ((placement.workers !== null && placement.workers !== 1) || placement.shard !== null)) {
    throw new UsageError("--working-set auto: the sizes are chosen from the server's capacity in one process; give them to run with --workers or --shard");
  }
  const repeats = parseRepeats(raw, placement);
  const fidelity = parseFidelity(raw, endpoint);
  const replicas = parseReplicas(raw, placement);
  checkGatesMeasurable(gates, { "check-fidelity": fidelity.fidelity !== undefined, replicas: replicas.replicas !== undefined });
  // The memory model (config/memory-model.ts): its working set's prefixes in every process, its prompts in flight.
  const inFlight = maxConcurrency === 0 ? numPrompts : Math.min(maxConcurrency, numPrompts);
  const maxWs = Math.max(...workingSets);
  const workers = typeof placement.workers === "number" ? placement.workers : 1;
  checkMemory(
    sweepMemoryBytes({ workingSetTokens: maxWs * splitPrompt(totalTokens, Math.max(...pcts)).prefixLen, inFlightTokens: inFlight * totalTokens, workers }),
    `--working-set ${maxWs} x --total-tokens ${totalTokens}, with ${inFlight} prompts in flight (--num-prompts ${numPrompts}, --max-concurrency ${maxConcurrency})${workers > 1 ? ` in ${workers} processes` : ""}`,
  );
  return {
    ...bound,
    ...target,
    workingSets,
    gates,
    ...placement,
    ...repeats,
    ...fidelity,
    ...replicas,
    ...parsePassportFlag(raw),
    ...(workingSetAuto ? { workingSetAuto: true as const } : {}),
  };
}

/** A list of replica URLs, each checked as --base-url is: distinct, one set of credentials. */
function replicaUrls(flag: string, text: string): { baseUrl: string; urlCredentials: string | null }[] {
  const parsed = text
    .split(",")
    .map((u) => u.trim())
    .map((u) => {
      if (u === "") throw new UsageError(`--${flag} "${text}": an empty replica URL`);
      return parseBaseUrl(u, "", 0);
    });
  const twice = replicaNamedTwice(parsed.map((p) => p.baseUrl));
  if (twice !== null) throw new UsageError(`--${flag}: a replica is named twice (${twice})`);
  return parsed;
}

/**
 * `--base-url ROUTER --replicas A,B,...`: a router routes the measured requests; the replicas' own addresses are the
 * control plane (flush, proof, warm, preflight). `--routing-key` names the header the router reads the session from
 * (presets smg, dynamo, aiperf, or a header name); `--replica-header` the response header naming the replica it chose,
 * which the ledger needs.
 */
function parseRoutedReplicas(raw: RawFlags, placement: Pick<RunOptions, "workers" | "shard">): Pick<RunOptions, "replicas"> {
  const router = str(raw, "base-url");
  if (router === undefined || router.includes(",")) throw new UsageError("--replicas: the measured requests go to the router: give it as one --base-url");
  const servedHeader = str(raw, "replica-header");
  if (servedHeader === undefined) {
    throw new UsageError(
      "--replicas: the ledger needs the replica behind each answer: --replica-header NAME (a response header the router sets, e.g. nginx's $upstream_addr)",
    );
  }
  const keyRaw = str(raw, "routing-key");
  const keyHeader = keyRaw === undefined ? null : (ROUTING_KEY_PRESETS[keyRaw] ?? keyRaw);
  for (const [flag, name] of [
    ["routing-key", keyHeader],
    ["replica-header", servedHeader],
  ] as const) {
    if (name !== null && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new UsageError(`--${flag} "${name}": not a header name`);
  }
  if ((placement.workers !== null && placement.workers !== 1) || placement.shard !== null)
    throw new UsageError("--replicas: the ledger is kept in one process (drop --workers and --shard)");
  const urls = replicaUrls("replicas", str(raw, "replicas")!).map((p) => p.baseUrl);
  return { replicas: { urls, route: "router", via: { url: parseBaseUrl(router, "", 0).baseUrl, keyHeader, servedHeader } } };
}

/**
 * `--base-url A,B,...`: replicas the client routes to (`--route`). One process only (shards would each route their
 * share without the others' in-flight counts), and the gates' and the ledger's figures are the union's.
 */
export function parseReplicas(raw: RawFlags, placement: Pick<RunOptions, "workers" | "shard">): Pick<RunOptions, "replicas"> {
  // --routing-key and --replica-header without --replicas: refused by their declarations (requires).
  if (str(raw, "replicas") !== undefined) return parseRoutedReplicas(raw, placement);
  const text = str(raw, "base-url");
  const routeRaw = str(raw, "route");
  const urls = text === undefined || !text.includes(",") ? [] : text.split(",").map((u) => u.trim());
  if (urls.length === 0) {
    if (routeRaw !== undefined) throw new UsageError("--route: routing needs several replicas (--base-url A,B,...)");
    return {};
  }
  const parsed = urls.map((u) => {
    if (u === "") throw new UsageError(`--base-url "${text}": an empty replica URL`);
    return parseBaseUrl(u, "", 0);
  });
  if (parsed.some((p) => p.urlCredentials !== parsed[0]!.urlCredentials)) throw new UsageError("--base-url: every replica takes the same credentials");
  const twice = replicaNamedTwice(parsed.map((p) => p.baseUrl));
  if (twice !== null) throw new UsageError(`--base-url: a replica is named twice (${twice})`);
  if ((placement.workers !== null && placement.workers !== 1) || placement.shard !== null)
    throw new UsageError("--base-url with several replicas: the client routes in one process (drop --workers and --shard)");
  return { replicas: { urls: parsed.map((p) => p.baseUrl), route: oneOf(raw, "route", ROUTE_POLICIES, "round-robin") } };
}

/** --check-fidelity and its two settings (which mean nothing without it). */
export function parseFidelity(raw: RawFlags, endpoint: string): Pick<RunOptions, "fidelity"> {
  const on = raw["check-fidelity"] === true;
  const sampleRaw = str(raw, "fidelity-sample");
  const tieRaw = str(raw, "fidelity-tie-nats");
  // --fidelity-sample and --fidelity-tie-nats without it: refused by their declarations (requires).
  if (!on) return {};
  if (endpoint === "chat")
    throw new UsageError("--check-fidelity with --endpoint chat: the check sends token ids and compares token ids; use --endpoint completions");
  const sample = parseIntFlag("fidelity-sample", sampleRaw ?? String(FIDELITY_DEFAULTS.sample), 1, 10_000);
  const tieNats = parseNumberFlag("fidelity-tie-nats", tieRaw ?? String(FIDELITY_DEFAULTS.tieNats), 0);
  return { fidelity: { sample, tieNats } };
}

/** --repeat N and --repeat-until-cv X (which needs --repeat as its maximum, and one process: shards run a fixed plan). */
function parseRepeats(raw: RawFlags, placement: Pick<RunOptions, "workers" | "shard">): Pick<RunOptions, "repeat" | "repeatUntilCv"> {
  const repeatRaw = str(raw, "repeat");
  const cvRaw = str(raw, "repeat-until-cv");
  const repeat = repeatRaw === undefined ? undefined : parseIntFlag("repeat", repeatRaw, 1);
  if (cvRaw === undefined) return repeat === undefined ? {} : { repeat };
  const cv = parseRelative("repeat-until-cv", cvRaw, { min: 0, max: 10, minOpen: true, what: "a coefficient of variation, e.g. 5%" });
  if (repeat === undefined || repeat < 2) {
    throw new UsageError(`--repeat-until-cv needs --repeat N of 2 or more: the most repeats of a line (a CV needs 2)`);
  }
  if (placement.workers !== null || placement.shard !== null) {
    throw new UsageError("--repeat-until-cv with --workers or --shard: shards run a fixed plan of lines; use --repeat N alone");
  }
  return { repeat, repeatUntilCv: cv };
}

/** --gate and --gates-file, refused (exit 2) when one would judge none of the `planned` lines the run will write. */
export function parsePlannedGates(raw: RawFlags, planned: readonly LineAxes[]): Gate[] {
  const gates = parseGates(str(raw, "gate"), str(raw, "gates-file"));
  checkGatesMatchPlan(gates, planned);
  return gates;
}

/** --workers, --shard and --coordinator, as every measuring command that spreads over processes takes them. */
export function parsePlacementFlags(raw: RawFlags): Pick<RunOptions, "workers" | "shard" | "coordinator"> {
  return {
    workers: str(raw, "workers") === undefined ? null : parseWorkersFlag(str(raw, "workers")!),
    shard: str(raw, "shard") === undefined ? null : parseShardFlag(str(raw, "shard")!),
    coordinator: str(raw, "coordinator") === undefined ? null : parseCoordinatorFlag(str(raw, "coordinator")!),
  };
}

/** --request-rate, --burstiness and --duration, checked against each other. */
function checkLoad(raw: RawFlags, load: Pick<RunOptions, "seed" | "requestRates" | "burstiness" | "durationS">): void {
  const { seed, requestRates, burstiness, durationS } = load;
  const openLoop = requestRates.some((r) => Number.isFinite(r));
  const burstinessRaw = str(raw, "burstiness");
  if (burstinessRaw !== undefined && !openLoop) {
    throw new UsageError(`--burstiness ${burstinessRaw}: shapes the gaps between arrivals, so it needs a finite --request-rate`);
  }
  if (durationS === null) return;
  const durationRaw = str(raw, "duration");
  if (requestRates.some((r) => !Number.isFinite(r))) {
    throw new UsageError(`--duration ${durationRaw}: needs a finite --request-rate for every line (requests arrive at that rate until the time is up)`);
  }
  // --num-prompts beside it: refused by the declaration (conflicts).
  const most = Math.max(...requestRates) * durationS;
  if (most > RUN_DEFAULTS.maxRequestsPerLine) {
    throw new UsageError(`--duration ${durationRaw}: rate x duration = ${Math.round(most)} requests per line, more than ${RUN_DEFAULTS.maxRequestsPerLine}`);
  }
  for (const ratePerS of requestRates) {
    if (arrivalCount({ ratePerS, burstiness, seed, count: null, durationS }) === 0) {
      throw new UsageError(`--duration ${durationRaw}: at ${ratePerS} req/s no request is due within ${durationS} s, so nothing would be measured`);
    }
  }
}

/**
 * Where the server is and which tokenizer to load: what every command that talks to a server reads the same way; and
 * how long the server itself may wait to flush (no flag: a newer SGLang's /flush_cache?timeout=).
 */
export function parseServerTarget(
  raw: RawFlags,
  modelHint = "",
  replicasAllowed = false,
): Pick<RunOptions, "baseUrl" | "urlCredentials" | "model" | "tokenizer" | "flushServerTimeoutS"> {
  const d = RUN_DEFAULTS;
  if (!replicasAllowed && str(raw, "base-url")?.includes(","))
    throw new UsageError("--base-url: several replicas (A,B,...) are routed by run and multiturn only; give one URL");
  const model = str(raw, "model");
  if (!model || model.trim() === "") throw new UsageError(`--model is required (a model id, or a tokenizer.json file or directory)${modelHint}`);
  const port = parseIntFlag("port", str(raw, "port") ?? String(d.port), 1, 65535);
  return {
    // Several replicas (run): the first is the server the run is prepared against (parseReplicas takes them all).
    ...parseBaseUrl(str(raw, "base-url")?.split(",")[0]?.trim(), str(raw, "host") ?? d.host, port),
    model,
    tokenizer: str(raw, "tokenizer") ?? model,
    flushServerTimeoutS: d.flushServerTimeoutS,
  };
}
