/**
 * The server-telemetry flags (engine/studies/telemetry-study.ts): how often each server's /metrics is scraped while
 * a point runs, and whether families no dialect reads are kept. Every measuring command takes them.
 */
import { UsageError } from "../../errors.ts";
import { bindField } from "./binding.ts";
import type { FlagDecl } from "./types.ts";

const TELEMETRY_DEFAULTS = {
  scrapeInterval: "1s",
  /** A shorter interval scrapes faster than any engine updates its gauges, and costs the server for nothing. */
  minScrapeIntervalMs: 250,
} as const;

const MEASURING = { run: true, demo: true, multiturn: true, capacity: true, replay: true } as const;

/** `1s`, `250ms`, `0.5` (seconds) or `0` (off) into milliseconds; one UsageError naming the flag otherwise. */
function parseScrapeInterval(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(text);
  if (m === null) throw new UsageError(`--${flag} "${text}": expected a duration such as 1s or 250ms (0: off)`);
  const ms = m[2] === "ms" ? Number(m[1]) : Number(m[1]) * 1000;
  if (ms === 0) return 0;
  if (ms < TELEMETRY_DEFAULTS.minScrapeIntervalMs)
    throw new UsageError(`--${flag} ${text}: at least ${TELEMETRY_DEFAULTS.minScrapeIntervalMs}ms (0: off), no engine updates its gauges faster`);
  return ms;
}

/** `HOST:PORT`, `:PORT` or `PORT` (loopback unless a host is named: the run's figures are nobody else's business). */
function parseListenAddress(text: string, flag: string): { host: string; port: number } {
  const m = /^\s*(?:(\[[^\]]+\]|[^:\s]*):)?(\d+)\s*$/.exec(text);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || !Number.isInteger(port) || port > 65535)
    throw new UsageError(`--${flag} "${text}": expected HOST:PORT, :PORT or PORT (port 0: a free one)`);
  const host = (m[1] ?? "").replace(/^\[|\]$/g, "");
  return { host: host === "" ? "127.0.0.1" : host, port };
}

const DECLS = [
  {
    name: "scrape-interval",
    type: "string" as const,
    help: "Scrape every server's (and replica's) /metrics this often during each point, plus once before and once after: KV usage, queue and the counters reconciled with the client's view (0: off; at least 250ms)",
    commands: MEASURING,
    default: TELEMETRY_DEFAULTS.scrapeInterval,
    bind: bindField("scrapeIntervalMs", parseScrapeInterval),
  },
  {
    name: "scrape-all",
    type: "boolean" as const,
    help: "Keep every /metrics family the server's dialect (SGLang, vLLM, llama.cpp) does not read in the line's server_telemetry (unknown_families: each summed over its label sets)",
    commands: MEASURING,
    bind: bindField.raw("scrapeAll", (raw) => raw["scrape-all"] === true),
  },
  {
    name: "serve-metrics",
    type: "string" as const,
    help: "Serve warmbench's own Prometheus metrics at HOST:PORT while it runs (loopback unless a host is named; :PORT or PORT alone): requests sent / finished / failed, tokens, cached tokens, in flight, TTFT and ITL histograms, the current point",
    commands: MEASURING,
    bind: bindField("serveMetrics", parseListenAddress),
  },
] as const;

export const TELEMETRY_FLAGS: readonly FlagDecl[] = DECLS;

/** The declarations as written, for the types of the options they fill. */
export type TelemetryDecl = (typeof DECLS)[number];
