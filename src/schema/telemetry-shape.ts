/**
 * The shapes of a line's server telemetry (`server_telemetry`: each server's scrapes as series in the client
 * timeline's buckets) and of its reconciliation (`server_reconciliation`: the server's counters against the client's
 * view). Kept apart from nested.ts: one feature, written by src/metrics/telemetry-*.ts and drawn by the report.
 */
import { array, bool, field, int, literal, nullable, num, object, record, str } from "./shape.ts";

const PACKED =
  "packed as the timeline's series are (src/metrics/timeline-codec.ts): per bucket, the difference from the previous bucket's value, 0 = null (no scrape in it)";
const perBucket = (what: string, unit: string) =>
  field(str(), `${what}, the mean of the scrapes answered in each bucket of the line's timeline (the same origin and bucket_s); unit ${unit}; ${PACKED}.`);

export const serverTelemetryShape = nullable(
  object({
    interval_ms: field(int(), "--scrape-interval, ms: the timer's period (0: only the scrapes before and after the point)."),
    scrapes_intended: field(
      int(),
      "Scrapes the point should have had: one before, one after, one as its measurement began (where marked), and one per interval of its duration, per server.",
    ),
    scrapes_ok: field(int(), "Scrapes answered and read, every server."),
    scrapes_failed: field(
      int(),
      "Scrapes that failed (refused, timed out, not 200, over the body limit) or were skipped while the previous one was still out, every server: counted, never fatal.",
    ),
    bucket_s: field(num(), "Width of every bucket, s: the line's timeline's."),
    buckets: field(int(), "How many buckets every series holds."),
    replicas: field(
      array(
        object({
          url: field(str(), "The server (or replica) scraped."),
          dialect: field(nullable(literal("sglang", "vllm", "llamacpp")), "Whose family names its /metrics used; null: none warmbench reads."),
          scrapes_ok: field(int(), "Its scrapes answered and read."),
          scrapes_failed: field(int(), "Its scrapes that failed or were skipped."),
          kv_usage_pct: perBucket("KV cache in use (SGLang token_usage, vLLM kv_cache_usage_perc or gpu_cache_usage_perc), %", "0.1 %"),
          running: perBucket("Requests running", "0.1 request"),
          waiting: perBucket("Requests waiting (queued, deferred)", "0.1 request"),
          unknown_families: field(record(num()), "--scrape-all: every family no dialect reads, summed over its label sets, at the point's last scrape.", true),
        }),
      ),
      "One entry per server: the one server, or each replica in --base-url / --replicas order.",
    ),
  }),
);

export const serverReconciliationShape = nullable(
  array(
    object({
      replica: field(nullable(int()), "The replica's index; null: the one server."),
      url: field(str(), "The server whose counters these are."),
      counter: field(
        literal("prompt_tokens", "cached_tokens", "requests", "cached_tokens_device", "cached_tokens_host", "cached_tokens_storage"),
        "Which counter: prompt tokens (cached included), cached prompt tokens, finished requests; and where the server labels its cached tokens by tier (SGLang's cache_source) and every request reported its breakdown, each tier's.",
      ),
      server: field(num(), "Its delta over the measured window, from the server's /metrics."),
      client: field(num(), "The same figure from the client's records of the requests that server served."),
      agrees: field(bool(), "Within rounding (0.5)."),
    }),
  ),
);
