/** --truth FILE: one JSONL line per finished request, with the epoch time of every token event. */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { genBody, ids, post, readRaw, start, streamPayloads } from "./mock-http.ts";

const dir = mkdtempSync(join(tmpdir(), "mock-truth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type TruthLine = {
  request_id: string | null;
  rid: string | null;
  received_ms: number;
  prompt_tokens: number;
  cached_tokens: number;
  forgotten_tokens: number;
  completion_tokens: number;
  events_ms: number[];
  events_tokens: number[];
  end: string;
};

const readLines = (file: string): TruthLine[] =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as TruthLine);

test("finished, rejected, faulted, disconnected and OpenAI requests each leave one line", async () => {
  const file = join(dir, "all.jsonl");
  const server = await start({ truthFile: file, abortEvery: 3, itlMs: 5 });
  const t0 = performance.timeOrigin + performance.now();
  await streamPayloads(await post(server, genBody(ids(30), 1))); // warm: not measured
  await streamPayloads(await post(server, { ...genBody([...ids(30), 99], 4), rid: "r-1" }, "/generate", { "x-request-id": "client-7" }));
  expect((await post(server, genBody([...ids(30), 98], 3, false))).status).toBe(200);
  expect((await post(server, { input_ids: [1, -1] })).status).toBe(400);
  await streamPayloads(await post(server, genBody(ids(5, 400), 4))); // the 3rd measured request: abort fault
  const abort = new AbortController();
  const gone = await fetch(server.url + "/generate", { method: "POST", body: JSON.stringify(genBody(ids(5, 500), 1000)), signal: abort.signal });
  await gone.body!.getReader().read();
  abort.abort();
  await streamPayloads(await post(server, { prompt: [...ids(30), 97], max_tokens: 3, stream: true }, "/v1/completions", { "x-request-id": "oai-1" }));
  await Bun.sleep(50);
  await server.stop();
  const t1 = performance.timeOrigin + performance.now();

  const lines = readLines(file);
  expect(lines.map((l) => Object.keys(l))).toEqual(
    lines.map(() => [
      "request_id",
      "rid",
      "received_ms",
      "prompt_tokens",
      "cached_tokens",
      "forgotten_tokens",
      "completion_tokens",
      "events_ms",
      "events_tokens",
      "end",
      "insert_at",
      "inflight_pages",
      "output_cache",
    ]),
  );
  const byEnd = (end: string) => lines.filter((l) => l.end === end);
  expect(lines.length).toBe(7);
  const measured = lines.find((l) => l.rid === "r-1")!;
  expect(measured).toMatchObject({
    request_id: "client-7",
    prompt_tokens: 31,
    cached_tokens: 30,
    completion_tokens: 4,
    events_tokens: [1, 2, 3, 4],
    end: "done",
  });
  expect(measured.received_ms).toBeGreaterThanOrEqual(t0 - 1);
  expect(measured.events_ms[0]!).toBeGreaterThanOrEqual(measured.received_ms);
  for (let i = 1; i < 4; i++) expect(measured.events_ms[i]!).toBeGreaterThanOrEqual(measured.events_ms[i - 1]!);
  expect(measured.events_ms[3]!).toBeLessThanOrEqual(t1);
  // The non-streamed request is one event: the whole body.
  expect(lines.find((l) => l.prompt_tokens === 31 && l.rid !== "r-1" && l.request_id === null)).toMatchObject({
    events_tokens: [3],
    end: "done",
    cached_tokens: 30,
  });
  expect(byEnd("error")).toMatchObject([{ rid: null, prompt_tokens: 0, events_ms: [], end: "error" }]);
  expect(byEnd("fault:abort")).toMatchObject([{ prompt_tokens: 5, events_tokens: [1, 2, 3], completion_tokens: 3 }]);
  expect(byEnd("disconnect").length).toBe(1);
  expect(byEnd("disconnect")[0]!.events_tokens[0]).toBe(1);
  expect(lines.find((l) => l.request_id === "oai-1")).toMatchObject({
    rid: "cmpl-oai-1",
    prompt_tokens: 31,
    cached_tokens: 30,
    events_tokens: [1, 2, 3],
    end: "done",
  });
});

test("lines reach the file within a few hundred ms without a stop, and later runs append", async () => {
  const file = join(dir, "append.jsonl");
  const server = await start({ truthFile: file });
  await streamPayloads(await post(server, genBody(ids(5), 2)));
  for (let i = 0; i < 100 && !existsSync(file); i++) await Bun.sleep(10);
  expect(readLines(file).length).toBe(1);
  await server.stop();
  const again = await start({ truthFile: file });
  const res = await post(again, genBody(ids(5), 2));
  expect((await readRaw(res)).error).toBeNull();
  await again.stop();
  expect(readLines(file).length).toBe(2);
});
