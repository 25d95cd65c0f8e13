/** The pre-serialized SGLang events are byte for byte what JSON.stringify of the event object gives. */
import { expect, test } from "bun:test";
import { buildMetaInfo, GeneratedOutput, type FinishReason, type MetaState } from "../../../src/mock/output.ts";
import { SglangEventBuilder } from "../../../src/mock/sglang-events.ts";

const ABORT: FinishReason = { type: "abort", message: 'timeout "quoted" \\ reached', status_code: 503, err_type: "ServiceUnavailable" };

/** The event as the mock used to build it: a whole object through JSON.stringify. */
function reference(
  output: GeneratedOutput,
  meta: MetaState,
  completionTokens: number,
  finish: FinishReason | null,
  first: boolean,
  incremental: boolean,
  extraText: string,
): Record<string, unknown> {
  output.growTo(completionTokens);
  const segment = output.nextSegment(incremental);
  return { text: segment.text + extraText, output_ids: segment.outputIds, meta_info: buildMetaInfo(meta, completionTokens, finish, first) };
}

/** Compare one built event with the reference, with the two clock fields taken from the built one. */
function expectSame(built: string, expected: Record<string, unknown>): void {
  const parsed = JSON.parse(built) as { meta_info: Record<string, unknown> };
  const info = expected.meta_info as Record<string, unknown>;
  for (const key of ["e2e_latency", "response_sent_to_client_ts"]) {
    expect(key in info).toBe(key in parsed.meta_info);
    if (key in info) info[key] = parsed.meta_info[key];
  }
  expect(built).toBe(JSON.stringify(expected));
}

for (const incremental of [false, true]) {
  for (const [cachedTokens, cachedHostTokens] of [
    [0, 0],
    [48, 0],
    [48, 16],
  ] as const) {
    test(`${incremental ? "incremental" : "cumulative"} events, ${cachedTokens} cached tokens (${cachedHostTokens} from the host tier), stream interval 3`, () => {
      const meta: MetaState = { rid: 'r"1\\é', promptTokens: 64, cachedTokens: 0, cachedHostTokens: 0, receivedAtMs: performance.now() - 5 };
      const builder = new SglangEventBuilder(meta, 151936, incremental);
      const output = new GeneratedOutput(151936);
      meta.cachedTokens = cachedTokens; // known at prefill start, before the first event
      meta.cachedHostTokens = cachedHostTokens;
      const counts = [1, 4, 7, 10, 11];
      counts.forEach((n, i) => {
        const done = i === counts.length - 1;
        const finish: FinishReason | null = done ? { type: "length", length: n } : null;
        const finishJson = finish === null ? null : JSON.stringify(finish);
        const extra = i === 2 ? "\u0000mark\u0000" : "";
        expectSame(builder.event(n, finishJson, extra), reference(output, meta, n, finish, i === 0, incremental, extra));
      });
    });
  }
}

test("a one-token request's only event carries both e2e_latency and the sent timestamp; an abort event", () => {
  const meta: MetaState = { rid: "one", promptTokens: 3, cachedTokens: 2, cachedHostTokens: 0, receivedAtMs: performance.now() };
  const single = new SglangEventBuilder(meta, 1000, false).event(1, '{"type":"length","length":1}', "");
  expectSame(single, reference(new GeneratedOutput(1000), meta, 1, { type: "length", length: 1 }, true, false, ""));
  expect(Object.keys((JSON.parse(single) as { meta_info: object }).meta_info).slice(-2)).toEqual(["e2e_latency", "response_sent_to_client_ts"]);

  const builder = new SglangEventBuilder(meta, 1000, true);
  const output = new GeneratedOutput(1000);
  expectSame(builder.event(1, null, ""), reference(output, meta, 1, null, true, true, ""));
  expectSame(builder.event(3, JSON.stringify(ABORT), ""), reference(output, meta, 3, ABORT, false, true, ""));
});
