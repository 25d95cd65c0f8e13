/**
 * The every-flag table of `warmbench mock`: each flag starts a mock process with it, and a client (fetch, from this
 * test) asks it the same questions it asks one started without it; the flag must change what the client sees:
 * status codes, streamed events, cached tokens, timings, the address it listens on, the files it writes.
 */
import { expect } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mockFor } from "../../helpers/flag-proof.ts";
import { LLAMA2_TOKENIZER } from "../../helpers/run-cli.ts";
import type { ProofBodies } from "./entries.ts";

/** What a client saw of one /generate (or /v1/completions) call. */
interface Reply {
  status: number;
  /** The body as parsed JSON (non-streaming) or null. */
  json: any;
  /** Streamed events (data: lines) parsed; a line that is not JSON is kept as { unparsable: text }. */
  events: any[];
  /** The body bytes are valid UTF-8. */
  utf8: boolean;
  /** From the request to the response headers, to the first body byte, to the end, ms. */
  headersMs: number;
  firstByteMs: number;
  totalMs: number;
  /** Longest wait between two body chunks, ms. */
  maxGapMs: number;
  /** Why reading failed (a reset, the cap), or null. */
  error: string | null;
}

const ids = (n: number, from = 100): number[] => Array.from({ length: n }, (_, i) => from + i);

/** POSTs `body` to `path` and reads the answer as it arrives, for at most `capMs`. */
async function call(url: string, path: string, body: unknown, capMs = 10_000): Promise<Reply> {
  const t0 = performance.now();
  const reply: Reply = { status: 0, json: null, events: [], utf8: true, headersMs: 0, firstByteMs: 0, totalMs: 0, maxGapMs: 0, error: null };
  const chunks: Uint8Array[] = [];
  try {
    const res = await fetch(url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(capMs),
    });
    reply.status = res.status;
    reply.headersMs = performance.now() - t0;
    let last = performance.now();
    for await (const chunk of res.body!) {
      const now = performance.now();
      if (chunks.length === 0) reply.firstByteMs = now - t0;
      else reply.maxGapMs = Math.max(reply.maxGapMs, now - last);
      last = now;
      chunks.push(chunk);
    }
  } catch (err) {
    reply.error = String(err);
  }
  reply.totalMs = performance.now() - t0;
  const bytes = Buffer.concat(chunks);
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    reply.utf8 = false;
  }
  const text = bytes.toString("utf8");
  if (text.startsWith("data:")) {
    const data = text
      .split("\n")
      .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
      .map((l) => l.slice(6));
    reply.events = data.map((d) => {
      try {
        return JSON.parse(d);
      } catch {
        return { unparsable: d };
      }
    });
  } else {
    try {
      reply.json = JSON.parse(text);
    } catch {
      // not JSON: the status says enough
    }
  }
  return reply;
}

/** SGLang's /generate, ignore_eos, streamed unless told otherwise. */
const generate = (url: string, inputIds: number[], maxNewTokens = 4, o: { stream?: boolean; capMs?: number } = {}): Promise<Reply> =>
  call(
    url,
    "/generate",
    { input_ids: inputIds, sampling_params: { max_new_tokens: maxNewTokens, ignore_eos: true, temperature: 0 }, stream: o.stream ?? true },
    o.capMs,
  );

/** The cached tokens (and their host-tier part) the last event or the body reported. */
const cachedOf = (r: Reply): { tokens: number; host: number } => {
  const meta = (r.events.at(-1) ?? r.json)?.meta_info;
  return { tokens: meta.cached_tokens, host: meta.cached_tokens_details?.host ?? 0 };
};

/** The status of one call; 0 when nothing answered. */
async function statusOf(url: string, path: string, method = "GET"): Promise<number> {
  try {
    return (await fetch(url + path, { method, signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
}

const withHost = (url: string, host: string) => Object.assign(new URL(url), { hostname: host }).origin;
const withPort = (url: string, port: number) => Object.assign(new URL(url), { port: String(port) }).origin;

/** A port nothing listens on now (the kernel's pick, released at once). */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

interface MockEntry<T> {
  args: string[];
  /** The mock compared with (default: one started without flags). */
  vs?: string[];
  /** What a client asks; run against both mocks. */
  ask: (url: string) => Promise<T>;
  proof: (o: T, base: T) => void;
}

const entry = <T>(e: MockEntry<T>): MockEntry<T> => e;

const LLAMA = ["--personality", "llamacpp"];
/** llama-server's /v1/completions with token ids; what it reused is in timings.cache_n. */
const llamaCachedOf = async (url: string, prompt: number[]): Promise<number> =>
  (await call(url, "/v1/completions", { prompt, max_tokens: 2, stream: false })).json.timings.cache_n;

const at = (url: string, path: string, method = "GET") => statusOf(url, path, method);
const TRUTH_FILE = join(mkdtempSync(join(tmpdir(), "warmbench-flag-truth-")), "truth.jsonl");

/** A, then B (which evicts A from a 64-token device tier), then A again: what the third call reports. */
const evictAndReturn = async (url: string): Promise<Reply> => {
  await generate(url, ids(64, 100));
  await generate(url, ids(64, 1000));
  return generate(url, ids(64, 100));
};

/** Runs `during` while a streamed request for `prompt` decodes (its prefill is over), then reads that request to its end. */
async function whileDecoding<T>(url: string, prompt: number[], during: () => Promise<T>): Promise<T> {
  const res = await fetch(url + "/generate", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input_ids: prompt, sampling_params: { max_new_tokens: 50, ignore_eos: true, temperature: 0 }, stream: true }),
  });
  const reader = res.body!.getReader();
  await reader.read(); // its first token event
  const result = await during();
  while (!(await reader.read()).done);
  return result;
}

const MOCK: Record<string, MockEntry<any>> = {
  personality: entry({ args: ["--personality", "vllm"], ask: (u) => at(u, "/version"), proof: (o, b) => expect([o, b]).toEqual([200, 404]) }),
  slots: entry({
    args: [...LLAMA, "--slots", "2"],
    vs: LLAMA,
    ask: async (u) => ((await (await fetch(u + "/slots")).json()) as unknown[]).length,
    proof: (o, b) => expect([o, b]).toEqual([2, 4]),
  }),
  // One slot: B takes it from A; with the RAM cache A's state comes back from RAM for A's second request.
  "cache-ram": entry({
    args: [...LLAMA, "--slots", "1", "--cache-ram"],
    vs: [...LLAMA, "--slots", "1"],
    ask: async (u) => {
      await llamaCachedOf(u, ids(64, 100));
      await llamaCachedOf(u, ids(64, 1000));
      return llamaCachedOf(u, ids(64, 100));
    },
    proof: (o, b) => {
      expect(o).toBe(63);
      expect(b).toBe(0);
    },
  }),
  "no-slot-save-path": entry({
    args: [...LLAMA, "--no-slot-save-path"],
    vs: LLAMA,
    ask: (u) => at(u, "/slots/0?action=erase", "POST"),
    proof: (o, b) => expect([o, b]).toEqual([501, 200]),
  }),
  // The same chat message: llama2's tokens instead of one per UTF-8 byte.
  tokenizer: entry({
    args: ["--tokenizer", LLAMA2_TOKENIZER],
    ask: async (u) =>
      (await call(u, "/v1/chat/completions", { model: "mock-model", messages: [{ role: "user", content: "hello hello hello world" }], max_tokens: 2 })).json
        .usage.prompt_tokens,
    proof: (o, b) => expect(o).toBeLessThan(b),
  }),
  host: entry({ args: ["--host", "127.0.0.2"], ask: (u) => at(withHost(u, "127.0.0.2"), "/health"), proof: (o, b) => expect([o, b]).toEqual([200, 0]) }),
  port: (() => {
    const port = freePort();
    return entry({ args: ["--port", String(port)], ask: (u) => at(withPort(u, port), "/health"), proof: (o, b) => expect([o, b]).toEqual([200, 0]) });
  })(),
  // 70 tokens sent twice: whole pages of 16 come back cached (64), against 69 with pages of 1.
  "page-size": entry({
    args: ["--page-size", "16"],
    ask: async (u) => {
      await generate(u, ids(70));
      return cachedOf(await generate(u, ids(70))).tokens;
    },
    proof: (o, b) => expect([o, b]).toEqual([64, 69]),
  }),
  "cache-tokens": entry({
    args: ["--cache-tokens", "64"],
    ask: async (u) => cachedOf(await evictAndReturn(u)).tokens,
    proof: (o, b) => {
      expect(o).toBe(0);
      expect(b).toBe(63);
    },
  }),
  "host-cache-tokens": entry({
    args: ["--cache-tokens", "64", "--host-cache-tokens", "1000"],
    vs: ["--cache-tokens", "64"],
    ask: async (u) => cachedOf(await evictAndReturn(u)),
    proof: (o, b) => {
      expect(o.host).toBeGreaterThan(0);
      expect(b).toEqual({ tokens: 0, host: 0 });
    },
  }),
  // 63 tokens loaded back from the host tier at 5 ms each.
  "host-load-us-per-token": entry({
    args: ["--cache-tokens", "64", "--host-cache-tokens", "1000", "--host-load-us-per-token", "5000"],
    vs: ["--cache-tokens", "64", "--host-cache-tokens", "1000"],
    ask: async (u) => (await evictAndReturn(u)).firstByteMs,
    proof: (o, b) => expect(o).toBeGreaterThan(b + 200),
  }),
  "ttft-base-ms": entry({
    args: ["--ttft-base-ms", "300"],
    ask: async (u) => (await generate(u, ids(64))).firstByteMs,
    proof: (o, b) => expect(o).toBeGreaterThan(b + 200),
  }),
  "prefill-us-per-token": entry({
    args: ["--prefill-us-per-token", "5000"],
    ask: async (u) => (await generate(u, ids(64, 3000))).firstByteMs,
    proof: (o, b) => expect(o).toBeGreaterThan(b + 200),
  }),
  "itl-ms": entry({
    args: ["--itl-ms", "100"],
    ask: async (u) => (await generate(u, ids(16), 5)).totalMs,
    proof: (o, b) => expect(o).toBeGreaterThan(b + 300),
  }),
  "stream-interval": entry({
    args: ["--stream-interval", "4"],
    ask: async (u) => (await generate(u, ids(16), 8)).events.length,
    proof: (o, b) => expect(o).toBeLessThan(b),
  }),
  // Two requests of 5 decode steps of 40 ms: one at a time they take twice as long.
  "max-running": entry({
    args: ["--max-running", "1", "--itl-ms", "40"],
    vs: ["--itl-ms", "40"],
    ask: async (u) => {
      const t0 = performance.now();
      await Promise.all([generate(u, ids(16, 100), 5), generate(u, ids(16, 500), 5)]);
      return performance.now() - t0;
    },
    proof: (o, b) => expect(o).toBeGreaterThan(b + 150),
  }),
  // Two prompts of 100 uncached tokens at 3 ms each: prefilled one after the other, the later waits for the first.
  "serial-prefill": entry({
    args: ["--serial-prefill", "--prefill-us-per-token", "3000"],
    vs: ["--prefill-us-per-token", "3000"],
    ask: async (u) => Math.max(...(await Promise.all([generate(u, ids(100, 100)), generate(u, ids(100, 5000))])).map((r) => r.firstByteMs)),
    proof: (o, b) => expect(o).toBeGreaterThan(b + 200),
  }),
  // Cumulative text: every event's text extends the one before; deltas put together make the last of those.
  incremental: entry({
    args: ["--incremental"],
    ask: async (u) => (await generate(u, ids(16), 6)).events.map((e) => e.text as string),
    proof: (o, b) => {
      expect(b.every((t, i) => i === 0 || (t.startsWith(b[i - 1]!) && t.length > b[i - 1]!.length))).toBe(true);
      expect(o.join("")).toBe(b.at(-1)!);
      expect(o).not.toEqual(b);
    },
  }),
  "context-length": entry({
    args: ["--context-length", "32"],
    ask: async (u) => (await generate(u, ids(64), 4, { stream: false })).status,
    proof: (o, b) => expect([o, b]).toEqual([400, 200]),
  }),
  "vocab-size": entry({
    args: ["--vocab-size", "100"],
    ask: async (u) => (await generate(u, ids(8), 4, { stream: false })).status,
    proof: (o, b) => expect([o, b]).toEqual([400, 200]),
  }),
  "model-name": entry({
    args: ["--model-name", "other-model"],
    ask: async (u) => ((await (await fetch(u + "/v1/models")).json()) as any).data[0].id,
    proof: (o, b) => expect([o, b]).toEqual(["other-model", "mock-model"]),
  }),
  "record-inputs": entry({ args: ["--record-inputs"], ask: (u) => at(u, "/mock/received"), proof: (o, b) => expect([o, b]).toEqual([200, 404]) }),
  "fail-every": entry({
    args: ["--fail-every", "1"],
    ask: async (u) => (await generate(u, ids(16))).status,
    proof: (o, b) => expect([o, b]).toEqual([503, 200]),
  }),
  "error-event-every": entry({
    args: ["--error-event-every", "1"],
    ask: async (u) => (await generate(u, ids(16))).events.some((e) => e.error !== undefined),
    proof: (o, b) => expect([o, b]).toEqual([true, false]),
  }),
  "abort-every": entry({
    args: ["--abort-every", "1"],
    ask: async (u) => finishOf(await generate(u, ids(16))),
    proof: (o, b) => expect([o, b]).toEqual(["abort", "length"]),
  }),
  "reset-every": entry({
    args: ["--reset-every", "1"],
    ask: async (u) => (await generate(u, ids(16))).error !== null,
    proof: (o, b) => expect([o, b]).toEqual([true, false]),
  }),
  "stall-every": entry({
    args: ["--stall-every", "1", "--stall-s", "0.5"],
    vs: ["--stall-s", "0.5"],
    ask: async (u) => (await generate(u, ids(16))).maxGapMs,
    proof: (o, b) => {
      expect(o).toBeGreaterThan(400);
      expect(b).toBeLessThan(300);
    },
  }),
  // Against the default 5 s stall the client gives up after 2 s.
  "stall-s": entry({
    args: ["--stall-every", "1", "--stall-s", "0.3"],
    vs: ["--stall-every", "1"],
    ask: async (u) => (await generate(u, ids(16), 4, { capMs: 2000 })).error === null,
    proof: (o, b) => expect([o, b]).toEqual([true, false]),
  }),
  "slow-headers-ms": entry({
    args: ["--slow-headers-ms", "300"],
    ask: async (u) => (await generate(u, ids(16))).headersMs,
    proof: (o, b) => expect(o).toBeGreaterThan(b + 200),
  }),
  "malformed-every": entry({
    args: ["--malformed-every", "1"],
    ask: async (u) => (await generate(u, ids(16))).events.filter((e) => e.unparsable !== undefined).length,
    proof: (o, b) => expect([o, b]).toEqual([1, 0]),
  }),
  "invalid-utf8-every": entry({
    args: ["--invalid-utf8-every", "1"],
    ask: async (u) => (await generate(u, ids(16))).utf8,
    proof: (o, b) => expect([o, b]).toEqual([false, true]),
  }),
  "flush-fail-first": entry({
    args: ["--flush-fail-first", "1"],
    ask: (u) => at(u, "/flush_cache", "POST"),
    proof: (o, b) => {
      expect(o).not.toBe(200);
      expect(b).toBe(200);
    },
  }),
  "no-generate": entry({ args: ["--no-generate"], ask: async (u) => (await generate(u, ids(16))).status, proof: (o, b) => expect([o, b]).toEqual([404, 200]) }),
  // Dies once the first measured request is admitted: nothing answers after it.
  "exit-after": entry({
    args: ["--exit-after", "1"],
    ask: async (u) => {
      await generate(u, ids(16));
      await Bun.sleep(300);
      return await at(u, "/health");
    },
    proof: (o, b) => expect([o, b]).toEqual([0, 200]),
  }),
  // A greedy answer with log-probabilities, asked twice: the second hits the cache, and only then does a fault act.
  "fault-wrong-kv": entry({
    args: ["--fault-wrong-kv"],
    ask: async (u) => {
      const logprobs = {
        input_ids: ids(32, 7100),
        sampling_params: { max_new_tokens: 5, temperature: 0 },
        stream: false,
        return_logprob: true,
        top_logprobs_num: 2,
      };
      await call(u, "/generate", logprobs);
      return (await call(u, "/generate", logprobs)).json.output_ids;
    },
    proof: (o, b) => {
      expect(o[0]).toBe(b[0]);
      expect(o.slice(1).some((id: number, i: number) => id !== b[i + 1])).toBe(true);
    },
  }),
  "fault-tie-flip": entry({
    args: ["--fault-tie-flip"],
    ask: async (u) => {
      const logprobs = {
        input_ids: ids(32, 7200),
        sampling_params: { max_new_tokens: 5, temperature: 0 },
        stream: false,
        return_logprob: true,
        top_logprobs_num: 2,
      };
      await call(u, "/generate", logprobs);
      return (await call(u, "/generate", logprobs)).json.output_ids;
    },
    proof: (o, b) => {
      // Only the first near-tied position (the second token) differs.
      expect(o.map((id: number, i: number) => (id === b[i] ? "=" : "x")).join("")).toBe("=x===");
    },
  }),
  // A prompt answered with 6 tokens, then the prompt and its answer: cached beyond the prompt only when answers are.
  "served-by-header": entry({
    args: ["--served-by-header", "X-Served-By"],
    ask: async (u) => (await fetch(`${u}/server_info`)).headers.get("x-served-by"),
    proof: (o, b) => {
      expect(o).toBe(new URL(o === null ? "http://x" : `http://${o}`).host);
      expect(o).not.toBeNull();
      expect(b).toBeNull();
    },
  }),
  // The same prompt twice through vLLM's completions: its cached tokens reported, or no prompt_tokens_details at all.
  "no-prompt-tokens-details": entry({
    args: ["--personality", "vllm", "--no-prompt-tokens-details"],
    vs: ["--personality", "vllm"],
    ask: async (u) => {
      const body = { model: "mock-model", prompt: ids(32, 7400), max_tokens: 1, stream: false };
      await call(u, "/v1/completions", body);
      return (await call(u, "/v1/completions", body)).json.usage.prompt_tokens_details ?? null;
    },
    proof: (o, b) => {
      expect(o).toBeNull();
      expect(b).toEqual({ cached_tokens: 31 }); // all of the prompt but its last token (page 1)
    },
  }),
  "no-output-cache": entry({
    args: ["--no-output-cache"],
    ask: async (u) => {
      const prompt = ids(32, 7300);
      const first = await call(u, "/generate", { input_ids: prompt, sampling_params: { max_new_tokens: 6, temperature: 0, ignore_eos: true }, stream: false });
      return cachedOf(await generate(u, [...prompt, ...first.json.output_ids, 5])).tokens;
    },
    proof: (o, b) => expect([o, b]).toEqual([32, 37]),
  }),
  // A second request sent while the first still decodes, with the first's prompt: cached only when prompts go in at prefill.
  "insert-at": entry({
    args: ["--insert-at", "finish", "--itl-ms", "20"],
    vs: ["--itl-ms", "20"],
    ask: (u) => whileDecoding(u, ids(32, 7600), async () => cachedOf(await generate(u, [...ids(32, 7600), 5])).tokens),
    proof: (o, b) => expect([o, b]).toEqual([0, 32]),
  }),
  // On a 64-token cache another prompt comes and goes while the first decodes: the first's pages survive only when held.
  "inflight-pages": entry({
    args: ["--inflight-pages", "locked", "--cache-tokens", "64", "--itl-ms", "20"],
    vs: ["--cache-tokens", "64", "--itl-ms", "20"],
    ask: (u) =>
      whileDecoding(u, ids(64, 7700), async () => {
        await generate(u, ids(64, 7800));
        return cachedOf(await generate(u, [...ids(64, 7700), 5])).tokens;
      }),
    proof: (o, b) => expect([o, b]).toEqual([64, 0]),
  }),
  // The same prompt twice, both measured: the second would hit, and every 2nd measured request that would forgets.
  "fault-forget-every": entry({
    args: ["--fault-forget-every", "2"],
    ask: async (u) => {
      await generate(u, ids(32, 7900));
      return cachedOf(await generate(u, ids(32, 7900))).tokens;
    },
    proof: (o, b) => expect([o, b]).toEqual([0, 31]),
  }),
  "flush-lies": entry({
    args: ["--flush-lies"],
    ask: async (u) => {
      await generate(u, ids(64, 7000));
      await at(u, "/flush_cache", "POST");
      return cachedOf(await generate(u, ids(64, 7000))).tokens;
    },
    proof: (o, b) => expect([o, b]).toEqual([63, 0]),
  }),
  // One line per finished request, appended every 100 ms; the base mock (asked first) writes none.
  truth: entry({
    args: ["--truth", TRUTH_FILE],
    ask: async (u) => {
      await generate(u, ids(16));
      await Bun.sleep(300);
      return existsSync(TRUTH_FILE)
        ? readFileSync(TRUTH_FILE, "utf8")
            .split("\n")
            .filter((l) => l !== "").length
        : 0;
    },
    proof: (o, b) => expect([o, b]).toEqual([1, 0]),
  }),
  "no-dev-mode": entry({ args: ["--no-dev-mode"], ask: (u) => at(u, "/reset_prefix_cache", "POST"), proof: (o, b) => expect([o, b]).toEqual([404, 200]) }),
  "no-metrics": entry({ args: ["--no-metrics"], ask: (u) => at(u, "/metrics"), proof: (o, b) => expect([o, b]).toEqual([404, 200]) }),
};

function finishOf(r: Reply): string {
  return r.events.at(-1)?.meta_info?.finish_reason?.type;
}

export const MOCK_PROOFS: ProofBodies = Object.fromEntries(
  Object.entries(MOCK).map(([flag, e]) => [
    flag,
    async () => {
      // The flagged mock is started for this flag alone; the base one is shared by every entry that compares with it.
      const base = await e.ask((await mockFor(e.vs ?? [])).url);
      const flagged = await e.ask((await mockFor(e.args)).url);
      e.proof(flagged, base);
    },
  ]),
);
