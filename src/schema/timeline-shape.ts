/**
 * The shapes of a line's run over time (`timeline`) and its steady-state window (`steady_state`), each field with
 * its unit. Kept apart from nested.ts: the timeline is one feature, read by src/metrics/timeline.ts and the report.
 */
import { field, int, nullable, num, object, str, type TypeOf } from "./shape.ts";

// Seven plain arrays of 120 buckets take 3.4-4.2 KB, half of it the ", " between values: each series is packed.
const PACKED =
  "Packed (src/metrics/timeline-codec.ts): per bucket, the value as an integer count of its unit, written as the difference from the previous " +
  "bucket's (zigzag, + 1; 0 = null), 5 bits per base64url character, low bits first, a character >= 32 meaning more follow";
const perBucket = (what: string, unit: string) =>
  field(str(), `${what}, one value per bucket (bucket k covers [k x bucket_s, (k + 1) x bucket_s) from the line's first send); unit ${unit}. ${PACKED}.`);
const meanOrNull = nullable(num());

export const timelineShape = nullable(
  object({
    bucket_s: field(num(), "Width of every bucket, s: a 1-2-5 step chosen so that the line's duration takes at most 120 buckets."),
    buckets: field(int(), "How many buckets every series holds."),
    started: perBucket("Requests sent", "1 request"),
    finished: perBucket("Requests that ended (completed or failed)", "1 request"),
    in_flight: perBucket(
      "Requests in flight, time-weighted mean over the bucket (kept rather than derived from started - finished, which gives only the count at each edge and misses requests shorter than a bucket)",
      "0.1 request",
    ),
    output_tokens: perBucket("Output tokens that arrived (the first at its first token event, each later one at the end of its gap)", "1 token"),
    ttft_ms: perBucket("Mean TTFT of the successful requests whose first token arrived in the bucket, rounded to 3 significant digits; null: none", "0.01 ms"),
    itl_ms: perBucket("Mean inter-token gap of the gaps that ended in the bucket, rounded to 3 significant digits; null: none", "0.01 ms"),
    cached_pct: perBucket(
      "Share of prompt tokens the server reported cached, over the requests sent in the bucket, rounded to 3 significant digits; null: none reported",
      "0.1 %",
    ),
  }),
);
export type Timeline = NonNullable<TypeOf<typeof timelineShape>>;

export const steadyStateShape = nullable(
  object({
    rule: field(num(), "The ratio of the peak that in-flight requests stay at or above inside the window (0.8, SGLang's steady-state rule)."),
    start_s: field(num(), "Where the window begins, s from the line's first send."),
    end_s: field(num(), "Where it ends, s from the line's first send."),
    duration_s: field(num(), "end_s - start_s, s."),
    peak_in_flight: field(int(), "Most requests in flight at once over the line."),
    min_in_flight: field(int(), "The fewest in flight the window allows: ceil(rule x peak_in_flight)."),
    mean_in_flight: field(num(), "Requests in flight, time-weighted mean over the window."),
    requests: field(int(), "Successful requests sent inside the window: the latencies below are theirs."),
    mean_ttft_ms: field(meanOrNull, "Their mean TTFT, ms; null: none."),
    p99_ttft_ms: field(meanOrNull, "Their 99th-percentile TTFT (numpy's linear), ms; null: none."),
    mean_itl_ms: field(meanOrNull, "Mean of their inter-token gaps, ms; null: none."),
    p99_itl_ms: field(meanOrNull, "99th percentile of their inter-token gaps, ms; null: none."),
    mean_e2e_latency_ms: field(meanOrNull, "Their mean end-to-end latency, ms; null: none."),
    request_throughput: field(num(), "Successful requests that ended inside the window, per second of it, req/s."),
    output_throughput: field(num(), "Output tokens that arrived inside the window (any request's), per second of it, tok/s."),
  }),
);
export type SteadyState = NonNullable<TypeOf<typeof steadyStateShape>>;
