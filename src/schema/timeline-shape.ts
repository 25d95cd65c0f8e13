/**
 * The shapes of a line's run over time (`timeline`) and its steady-state window (`steady_state`), each field with
 * its unit. Kept apart from nested.ts: the timeline is one feature, read by src/metrics/timeline.ts and the report.
 */
import { array, field, int, nullable, num, object, type TypeOf } from "./shape.ts";

const perBucket = (what: string) => `${what}, one value per bucket (bucket k covers [k x bucket_s, (k + 1) x bucket_s) from the line's first send).`;
const meanOrNull = nullable(num());

export const timelineShape = nullable(
  object({
    bucket_s: field(num(), "Width of every bucket, s: a 1-2-5 step chosen so that the line's duration takes at most 120 buckets."),
    started: field(array(int()), perBucket("Requests sent")),
    finished: field(array(int()), perBucket("Requests that ended (completed or failed)")),
    in_flight: field(array(num()), perBucket("Requests in flight, time-weighted mean over the bucket (whole from 10 up, 2 significant digits below)")),
    output_tokens: field(array(int()), perBucket("Output tokens that arrived (the first at its first token event, each later one at the end of its gap)")),
    ttft_ms: field(array(meanOrNull), perBucket("Mean TTFT, ms (whole from 10 ms up, 2 significant digits below), of the successful requests whose first token arrived in the bucket; null: none")),
    itl_ms: field(array(meanOrNull), perBucket("Mean inter-token gap, ms (whole from 10 ms up, 2 significant digits below), of the gaps that ended in the bucket; null: none")),
    cached_pct: field(array(meanOrNull), perBucket("Share of prompt tokens the server reported cached, %, over the requests sent in the bucket (whole %); null: none reported")),
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
