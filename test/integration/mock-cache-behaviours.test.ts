/**
 * `warmbench mock` started as a process with each legal cache behaviour (--insert-at, --inflight-pages,
 * --no-output-cache) and the forget fault (--fault-forget-every): the same requests over HTTP, and what the truth
 * file (--truth) records of them - cached_tokens as reported, forgotten_tokens, and the behaviour on every line.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess } from "../helpers/mock-process.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-mock-behaviours-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FAST = ["--ttft-base-ms", "1", "--prefill-us-per-token", "0", "--itl-ms", "5"];
/** The mock's first output token id (output.ts): a request that sends it after a prompt continues that prompt's answer. */
const ANSWER_0 = 1000;
const ids = (n: number, from: number): number[] => Array.from({ length: n }, (_, i) => from + i);
const body = (rid: string, inputIds: number[], maxNewTokens: number, stream: boolean) => ({
  rid,
  input_ids: inputIds,
  sampling_params: { max_new_tokens: maxNewTokens, temperature: 0, ignore_eos: true },
  stream,
});

async function generate(url: string, rid: string, inputIds: number[], maxNewTokens = 2): Promise<number> {
  const res = await fetch(`${url}/generate`, { method: "POST", body: JSON.stringify(body(rid, inputIds, maxNewTokens, false)) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { meta_info: { cached_tokens: number } }).meta_info.cached_tokens;
}

/**
 * A 32-token prefix warmed; "long" (prefix + 1) decodes for ~300 ms while "during" (prefix + 1, 2) and "again" (that,
 * its answer's first token, 3) come and go; then "after" (prefix + 9) once "long" has ended. Returns what each
 * reported and the truth lines by rid.
 */
async function scenario(flags: string[]) {
  const truth = join(dir, `${flags.join("_").replaceAll("-", "") || "defaults"}.jsonl`);
  const mock = await startMockProcess([...FAST, "--truth", truth, ...flags]);
  try {
    const prefix = ids(32, 500);
    const reported: Record<string, number> = {};
    reported.warm = await generate(mock.url, "warm", prefix, 1);
    const long = await fetch(`${mock.url}/generate`, { method: "POST", body: JSON.stringify(body("long", [...prefix, 1], 60, true)) });
    const reader = long.body!.getReader();
    await reader.read(); // its first token: prefill is over
    reported.during = await generate(mock.url, "during", [...prefix, 1, 2]);
    reported.again = await generate(mock.url, "again", [...prefix, 1, 2, ANSWER_0, 3]);
    while (!(await reader.read()).done);
    reported.after = await generate(mock.url, "after", [...prefix, 9]);
    const stats = (await (await fetch(`${mock.url}/mock/stats`)).json()) as { faultsInjected: Record<string, number> };
    expect(await mock.stop()).toBe(0);
    const lines = readFileSync(truth, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { reported, faults: stats.faultsInjected, truth: Object.fromEntries(lines.map((l) => [l.rid as string, l])) };
  } finally {
    await mock.stop();
  }
}

test("the defaults: prompts cached at prefill, answers cached, nothing forgotten", async () => {
  const { reported, faults, truth } = await scenario([]);
  // "during" finds the running request's prompt (prefix + 1), "again" "during"'s prompt and answer.
  expect(reported).toEqual({ warm: 0, during: 33, again: 35, after: 32 });
  expect(faults).toEqual({});
  for (const line of Object.values(truth)) {
    expect(line).toMatchObject({ forgotten_tokens: 0, insert_at: "prefill", inflight_pages: "evictable", output_cache: true });
  }
  expect(truth.long).toMatchObject({ cached_tokens: 32, completion_tokens: 60, end: "done" });
});

test("--insert-at finish --inflight-pages locked --no-output-cache --fault-forget-every 2", async () => {
  const { reported, faults, truth } = await scenario(["--insert-at", "finish", "--inflight-pages", "locked", "--no-output-cache", "--fault-forget-every", "2"]);
  // Measured: long (1), during (2, forgotten: it would have found the prefix), again (3), after (4, forgotten).
  // "again" finds "during"'s prompt (inserted when it ended, forgotten or not) but no answer; "long" is still running.
  expect(reported).toEqual({ warm: 0, during: 0, again: 34, after: 0 });
  expect(faults).toEqual({ forget: 2 });
  expect(truth.during).toMatchObject({ cached_tokens: 0, forgotten_tokens: 32, end: "done" });
  expect(truth.after).toMatchObject({ cached_tokens: 0, forgotten_tokens: 32, end: "done" });
  expect(truth.again).toMatchObject({ cached_tokens: 34, forgotten_tokens: 0 });
  expect(truth.long).toMatchObject({ cached_tokens: 32, forgotten_tokens: 0 });
  for (const line of Object.values(truth)) expect(line).toMatchObject({ insert_at: "finish", inflight_pages: "locked", output_cache: false });
});
