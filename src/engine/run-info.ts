/** The run's identity and its description (written once, in its first line), the same for every producer. */
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { RunInfo } from "../schema/nested.ts";
import { VERSION } from "../version.ts";
import { redactSecrets } from "./redact.ts";

/** 8 random base-36 characters: enough to tell the runs of one file apart. */
export function newRunId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}

/** "maxConcurrency" -> "max_concurrency". */
const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * An option as JSON can hold it: nested objects (multiturn's think time) with snake_case keys, as all JSON we
 * write; bigints and infinite rates as text ("inf", as the flag is written).
 */
function snakeKeys(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value).replace("Infinity", "inf");
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeKeys(v)]));
}

/** The run's description, written once in its first line: shell loops over server flags describe themselves. */
export function runInfo(opts: object, server: ServerProfile, backend: Backend): RunInfo {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (key === "apiKey") options.api_key = value ? "(set)" : null;
    else if (key === "urlCredentials") options.url_credentials = value ? "(set)" : null;
    else if (key === "gates") options.gates = (value as { expr: string }[]).map((g) => g.expr);
    else options[snake(key)] = snakeKeys(value);
  }
  // What ran, as --backend names it (engine.source says whether it was detected): an SGLang user's file reads as
  // it did before --backend auto.
  options.backend = backend.name;
  options.endpoint = backend.endpoint;
  const engine = server.engine!;
  return {
    warmbench_version: VERSION,
    started_at: new Date().toISOString(),
    options,
    served_model: server.model,
    page_size: server.pageSize,
    page_size_source: server.pageSizeSource,
    server_info_source: server.info.source,
    server_version: server.info.version,
    server_info: server.info.raw ? redactSecrets(server.info.raw) : null,
    engine: {
      name: engine.name,
      source: engine.source,
      evidence: engine.evidence,
      endpoint: backend.generatePath,
      prompt_encoding: backend.promptEncoding,
      cache_slots: server.cacheSlots ?? null,
      max_running: server.maxRunning ?? null,
      flush_gap: server.flushGap ?? null,
    },
  };
}
