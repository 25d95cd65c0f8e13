/**
 * `warmbench passport` against mocks whose cache geometry is known: page sizes 1, 16 and 64, three capacities, with
 * and without a host tier, answers cached or not. Each figure must come back: the page size exactly, the capacity
 * within one page (the mock holds whole pages: its capacity floored to a page), LRU eviction, the host tier's
 * presence; and a server that fails requests gives exit 3, not a passport.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { MOCK_VERSION } from "../../src/mock/info.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-passport-"));
const mocks: MockServer[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

let n = 0;
async function passport(over: Partial<MockOptions>, more: string[] = []) {
  const m = await startMockServer(mockOptions({ port: 0, itlMs: 0, ttftBaseMs: 1, prefillUsPerToken: 1, ...over }));
  mocks.push(m);
  const file = join(dir, `p${n++}.json`);
  const r = await runCli(["passport", "--model", LLAMA2_TOKENIZER, "--base-url", m.url, "--output-file", file, "--quiet", ...more], { timeoutMs: 120_000 });
  return { r, p: r.code === 0 || r.code === 3 ? JSON.parse(readFileSync(file, "utf8")) : null, mock: m };
}

describe("a passport recovers the mock's cache geometry", () => {
  const cases: Array<[string, Partial<MockOptions>, { page: number; capacity: number; outputs: boolean; host: boolean }]> = [
    ["page 1, 3000 tokens", { pageSize: 1, cacheTokens: 3000 }, { page: 1, capacity: 3000, outputs: true, host: false }],
    ["page 16, 5000 tokens", { pageSize: 16, cacheTokens: 5000 }, { page: 16, capacity: 5000, outputs: true, host: false }],
    [
      "page 64, 20000 tokens, answers not cached",
      { pageSize: 64, cacheTokens: 20000, noOutputCache: true },
      { page: 64, capacity: 20000, outputs: false, host: false },
    ],
    [
      "page 16, 4000 tokens and a host tier of 6000",
      { pageSize: 16, cacheTokens: 4000, hostCacheTokens: 6000 },
      { page: 16, capacity: 4000, outputs: true, host: true },
    ],
  ];
  for (const [name, over, want] of cases) {
    test(name, async () => {
      const { r, p } = await passport(over);
      expect(r.code, r.stderr).toBe(0);
      expect(p.page_size_tokens.value).toBe(want.page);
      // Within one page of the truth (the mock holds whole pages).
      expect(p.capacity_tokens.value).toBeLessThanOrEqual(want.capacity);
      expect(p.capacity_tokens.value).toBeGreaterThan(want.capacity - want.page - 1);
      expect(p.outputs_cached.value).toBe(want.outputs);
      expect(p.second_tier.value.present).toBe(want.host);
      if (want.host) {
        // Both tiers hold more than the first, no more than both capacities.
        expect(p.second_tier.value.total_capacity_tokens).toBeGreaterThan(want.capacity);
        expect(p.second_tier.value.total_capacity_tokens).toBeLessThanOrEqual(want.capacity + 6000);
      }
      if (want.capacity >= 3 * 1024) expect(p.eviction.value).toBe("lru");
      expect(p.stated).toMatchObject({ page_size: want.page, capacity_tokens: want.capacity });
      expect(r.stdout).toContain("Cache passport:");
    }, 120_000);
  }

  test("when a prompt enters the cache: at its prefill's end or only at its finish, from a mock of each (answers at 5 ms a token)", async () => {
    for (const insertAt of ["prefill", "finish"] as const) {
      const { r, p } = await passport({ pageSize: 16, cacheTokens: 5000, itlMs: 5, insertAt });
      expect(r.code, r.stderr).toBe(0);
      expect([insertAt, p.insert_at.value, p.insert_at.uncertainty, p.insert_at.why]).toEqual([insertAt, insertAt, "exact", null]);
      expect(r.stdout).toContain(`Prompt cached at:`);
    }
    // Answers streamed at once end before the second prompt is answered: not measured, and why.
    const { p } = await passport({ pageSize: 16, cacheTokens: 5000 });
    expect(p.insert_at.value).toBeNull();
    expect(p.insert_at.why).toMatch(/the order cannot be told|before the first answer's first token/);
  }, 120_000);

  test("a cache larger than --max-tokens is reported as a lower bound, and the search stays within it", async () => {
    const { r, p } = await passport({ pageSize: 16, cacheTokens: 100_000 }, ["--max-tokens", "8000"]);
    expect(r.code).toBe(0);
    expect(p.capacity_tokens.value).toBeLessThanOrEqual(8000);
    expect(p.capacity_tokens.uncertainty).toMatch(/a lower bound/);
    expect(p.eviction.value).toBeNull();
  });

  test("idle expiry: an entry left idle for --idle-wait is still cached on the mock", async () => {
    const { r, p } = await passport({ pageSize: 16, cacheTokens: 5000 }, ["--idle-wait", "0.3"]);
    expect(r.code).toBe(0);
    expect(p.idle_expiry.value).toBe("none_within_wait");
  });

  test("a server that reports no cached tokens gets no figure that needs them: not measured, with the reason, never a guess", async () => {
    const { r, p } = await passport({ personality: "vllm", pageSize: 16, cacheTokens: 5000, noPromptTokensDetails: true });
    expect(r.code, r.stderr).toBe(0);
    for (const figure of [p.page_size_tokens, p.capacity_tokens]) {
      expect(figure.value).toBeNull();
      expect(figure.why).toMatch(/reports no cached tokens/);
    }
    // vLLM's completions stream text, not ids: the answers check says so before it would need the cached tokens.
    expect(p.outputs_cached.value).toBeNull();
    expect(p.eviction.value).toBeNull();
    expect(p.second_tier.value).toBeNull();
  });

  test("a server that fails some requests gives exit 3 and says which figures are not measured", async () => {
    // The mock fails requests of more than one output token: the answers check sends one.
    const { r, p } = await passport({ pageSize: 16, cacheTokens: 5000, failEvery: 1 });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/of the passport's \d+ requests failed/);
    expect(p.requests_failed).toBeGreaterThan(0);
  });
});

describe("a passport used: --passport FILE", () => {
  test("run takes the page size and capacity the server does not state (a vLLM mock), records it, and its cache check holds", async () => {
    const { r, p, mock } = await passport({ personality: "vllm", pageSize: 32, cacheTokens: 8000 });
    expect(r.code, r.stderr).toBe(0);
    expect(p.stated).toMatchObject({ page_size: null, capacity_tokens: null });
    const file = join(dir, `p${n - 1}.json`);
    const out = join(dir, "with-passport.jsonl");
    const run = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--passport",
      file,
      "--num-prompts",
      "4",
      "--total-tokens",
      "240",
      "--pcts",
      "50",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--verify-cache",
      "strict",
      "--output-file",
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/page size unknown/);
    const line = readJsonl(out, { validate: true })[0];
    expect([line.page_size, line.run.page_size_source, line.cache_capacity_tokens, line.cache_check]).toEqual([32, "passport", 8000, "ok"]);
    // What the passport was measured on is recorded beside what was taken from it.
    expect([p.engine, p.base_url]).toEqual(["vllm", mock.url]);
    expect(line.run.options.passport).toEqual({
      file,
      page_size: 32,
      capacity_tokens: 8000,
      answers_cached: p.outputs_cached.value,
      insert_at: p.insert_at.value,
      engine: "vllm",
      server_version: p.server_version,
      base_url: mock.url,
    });
    // The report shows the passport beside the run it informed.
    const md = join(dir, "with-passport.md");
    const rep = await runCli(["report", out, "--md", md]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(readFileSync(md, "utf8")).toMatch(/\| cache passport \|[\s\S]*p\d+\.json: page 32, capacity 8000 tokens \|/);
    // Without it the client guesses vLLM's block size (16): it expects 112 of a 120-token prefix cached, the server holds 96.
    const guessed = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--num-prompts",
      "4",
      "--total-tokens",
      "240",
      "--pcts",
      "50",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--verify-cache",
      "strict",
    ]);
    expect(guessed.code).toBe(4);
  });

  test("the cache model takes whether answers are cached from the passport: a conversation's ranges narrow, every truth in them", async () => {
    const truth = join(dir, "answers-truth.jsonl");
    const { r, p, mock } = await passport({ pageSize: 16, cacheTokens: 600, noOutputCache: true, truthFile: truth });
    expect(r.code, r.stderr).toBe(0);
    expect(p.outputs_cached).toMatchObject({ value: false, uncertainty: "exact" });
    const file = join(dir, `p${n - 1}.json`);
    // 4 conversations of 4 rounds, each answer 40 tokens (more than two pages): what a turn's answer leaves decides.
    const shape = "--num-clients 4 --num-rounds 4 --shared-system-tokens 32 --turn-tokens 48 --output-len 40 --settle 0 --verify-cache strict";
    const conversation = (tag: string, more: string[]) => {
      const files = ["--output-file", join(dir, `${tag}.jsonl`), "--request-details", join(dir, `${tag}-details.jsonl`)];
      return runCli(["multiturn", "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, ...shape.split(" "), ...files, ...more]);
    };
    const width = (tag: string) => {
      const served = new Map(readJsonl(truth).map((t: any) => [t.request_id, t.cached_tokens]));
      let sum = 0;
      for (const d of readJsonl(join(dir, `${tag}-details.jsonl`))) {
        const t = served.get(d.request_id);
        expect([d.request_id, t !== undefined]).toEqual([d.request_id, true]);
        expect(t).toBeGreaterThanOrEqual(d.expected_cached_tokens_lower);
        expect(t).toBeLessThanOrEqual(d.expected_cached_tokens_upper);
        sum += d.expected_cached_tokens_upper - d.expected_cached_tokens_lower;
      }
      return sum;
    };
    const told = await conversation("answers-passport", ["--passport", file]);
    expect(told.code, told.stderr).toBe(0);
    expect(told.stderr).toContain(`Answers not cached with their prompts, from the passport ${file}`);
    const unknown = await conversation("answers-unknown", []);
    expect(unknown.code, unknown.stderr).toBe(0);
    await Bun.sleep(250); // the mock appends its truth every 100 ms
    const [withPassport, without] = [width("answers-passport"), width("answers-unknown")];
    console.log(`a conversation's summed range width: ${withPassport} tokens with the passport's answers figure, ${without} without`);
    expect(withPassport).toBeLessThan(without);
  });

  test("a file that is no passport is exit 2 before anything is sent", async () => {
    const m = await startMockServer(mockOptions({ port: 0 }));
    mocks.push(m);
    const notPassport = join(dir, "not.json");
    await Bun.write(notPassport, '{"kind":"something"}');
    for (const [file, message] of [
      [notPassport, /not a warmbench passport/],
      [join(dir, "none.json"), /no such file/],
    ] as const) {
      const r = await runCli(["run", "--model", LLAMA2_TOKENIZER, "--base-url", m.url, "--passport", file]);
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(m.stats().generateRequests).toBe(0);
  });

  test("a passport of another engine or server version is exit 2 before anything is sent; of another address, a warning", async () => {
    const { r, p, mock } = await passport({ pageSize: 16, cacheTokens: 4000 });
    expect(r.code, r.stderr).toBe(0);
    expect([p.engine, p.server_version]).toEqual(["sglang", MOCK_VERSION]);
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ server_version: "0.0.1-other" }, 2, /--passport .*: measured on server version 0\.0\.1-other, but the server is /],
      // 0.4 let a passport that states no version through to any server.
      [{ server_version: null }, 2, /--passport .*: measured on server version \(none stated\), but the server is 0\.5\.17-mock/],
      [{ engine: "llama.cpp" }, 2, /--passport .*: measured on llama\.cpp, but the server is sglang/],
      [{ base_url: "http://elsewhere:8000" }, 0, /--passport .*: measured at http:\/\/elsewhere:8000, used for /],
    ];
    for (const [over, code, message] of cases) {
      const file = join(dir, `other-${Object.keys(over)[0]}-${String(Object.values(over)[0])}.json`);
      await Bun.write(file, JSON.stringify({ ...p, ...over }));
      const before = mock.stats().generateRequests;
      const run = await runCli([
        "run",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        mock.url,
        "--passport",
        file,
        "--num-prompts",
        "2",
        "--total-tokens",
        "240",
        "--pcts",
        "50",
        "--output-len",
        "2",
        "--settle",
        "0",
      ]);
      expect([run.code, run.stderr], JSON.stringify(over)).toEqual([code, expect.stringMatching(message)]);
      if (code !== 0) expect(mock.stats().generateRequests).toBe(before);
    }
  });

  test("--working-set auto: sizes whose prefixes fill half, all and twice the measured capacity", async () => {
    const { p, mock } = await passport({ personality: "vllm", pageSize: 16, cacheTokens: 4000 });
    expect(p.capacity_tokens.value).toBe(4000);
    const file = join(dir, `p${n - 1}.json`);
    const out = join(dir, "auto.jsonl");
    const r = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--passport",
      file,
      "--working-set",
      "auto",
      "--num-prompts",
      "8",
      "--total-tokens",
      "200",
      "--pcts",
      "80",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    // A prefix of 160 tokens: 4000 x 0.5 / 160 = 12.5 -> 13, 25, 50.
    expect(readJsonl(out).map((l) => l.working_set)).toEqual([1, 13, 25, 50]);
    const none = await runCli(["run", "--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--working-set", "auto", "--pcts", "80", "--settle", "0"]);
    expect([none.code, none.stderr]).toEqual([2, expect.stringMatching(/--working-set auto: the server states no cache capacity/)]);
  }, 120_000);
});

describe("issue 37: a passport is checked before anything is sent, and answers the first signal", () => {
  /** A well-formed passport of the mock (sglang personality, its version) to forge from. */
  const sound = {
    kind: "warmbench-passport",
    version: 1,
    warmbench_version: "0.4.0",
    measured_at: "2026-01-01T00:00:00.000Z",
    base_url: "http://127.0.0.1:1",
    engine: "sglang",
    server_version: MOCK_VERSION,
    page_size_tokens: { value: 16, method: "m", uncertainty: "exact", why: null },
    capacity_tokens: { value: 4000, method: "m", uncertainty: "-0/+16 tokens (one page)", why: null },
  };

  test("a forged passport (a page or capacity out of bounds or not an integer, an unknown version) is exit 2 naming the field", async () => {
    const m = await startMockServer(mockOptions({ port: 0 }));
    mocks.push(m);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { page_size_tokens: { ...sound.page_size_tokens, value: 1e18 } },
        /page_size_tokens\.value is 1000000000000000000, not an integer page size from 1 to 1000000/,
      ],
      [{ page_size_tokens: { ...sound.page_size_tokens, value: 0 } }, /page_size_tokens\.value is 0, not an integer page size/],
      [{ page_size_tokens: { ...sound.page_size_tokens, value: -16 } }, /page_size_tokens\.value is -16,/],
      [{ page_size_tokens: { ...sound.page_size_tokens, value: "16" } }, /page_size_tokens\.value is "16",/],
      [{ page_size_tokens: { ...sound.page_size_tokens, value: 16.5 } }, /page_size_tokens\.value is 16\.5,/],
      [{ capacity_tokens: { ...sound.capacity_tokens, value: -5 } }, /capacity_tokens\.value is -5, not a positive integer of tokens/],
      [{ capacity_tokens: { ...sound.capacity_tokens, value: 1e300 } }, /capacity_tokens\.value is 1e\+300,/],
      [{ capacity_tokens: 4000 }, /capacity_tokens is 4000, not a passport figure/],
      [{ version: 2 }, /version is 2, not a passport version this warmbench reads \(1\)/],
      [{ server_version: 7 }, /server_version is 7,/],
      [{ engine: "" }, /engine is "", not an engine name/],
    ];
    for (const [over, message] of cases) {
      const file = join(dir, `forged-${n++}.json`);
      await Bun.write(file, JSON.stringify({ ...sound, ...over }));
      const r = await runCli(["run", "--model", LLAMA2_TOKENIZER, "--base-url", m.url, "--passport", file, "--settle", "0"]);
      expect([r.code, r.stderr], JSON.stringify(over)).toEqual([2, expect.stringMatching(new RegExp(`--passport ${file}: ${message.source}`))]);
    }
    // The sound one is taken (the run goes on to measure: exit 0).
    const file = join(dir, `sound-${n++}.json`);
    await Bun.write(file, JSON.stringify(sound));
    expect(m.stats().generateRequests).toBe(0);
    const ok = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      m.url,
      "--passport",
      file,
      "--num-prompts",
      "2",
      "--total-tokens",
      "64",
      "--pcts",
      "0",
      "--output-len",
      "2",
      "--settle",
      "0",
      "--quiet",
    ]);
    expect(ok.code, ok.stderr).toBe(0);
  }, 120_000);

  test("--output-file that cannot be written (/dev/full, a read-only folder) is refused before any request", async () => {
    const m = await startMockServer(mockOptions({ port: 0, pageSize: 16, cacheTokens: 2000 }));
    mocks.push(m);
    const ro = join(dir, "read-only");
    mkdirSync(ro);
    // A read-only filesystem: root writes anywhere a mode bit forbids, not there.
    execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", ro]);
    try {
      for (const [file, message] of [
        ["/dev/full", /--output-file: cannot write \/dev\/full: ENOSPC/],
        [join(ro, "p.json"), /--output-file: directory .*read-only is not writable|--output-file: cannot write .*read-only\/p\.json: EROFS/],
      ] as const) {
        const r = await runCli(["passport", "--model", LLAMA2_TOKENIZER, "--base-url", m.url, "--output-file", file, "--quiet"]);
        expect([r.code, r.stderr], file).toEqual([2, expect.stringMatching(message)]);
      }
    } finally {
      execFileSync("umount", [ro]);
    }
    expect(m.stats().generateRequests).toBe(0);
  });

  test("SIGTERM during the capacity search: exit 130, what was measured said", async () => {
    const m = await startMockServer(mockOptions({ port: 0, itlMs: 0, ttftBaseMs: 1, prefillUsPerToken: 1, pageSize: 16, cacheTokens: 400_000 }));
    mocks.push(m);
    const proc = Bun.spawn([BINARY, "passport", "--model", LLAMA2_TOKENIZER, "--base-url", m.url], { stdout: "pipe", stderr: "pipe" });
    let stderr = "";
    let signalled = false;
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of proc.stderr) {
        stderr += decoder.decode(chunk, { stream: true });
        if (stderr.includes("Searching the cache's capacity") && proc.signalCode === null && !signalled) {
          signalled = true;
          // A few trials in, not at its first request.
          setTimeout(() => proc.kill("SIGTERM"), 300);
        }
      }
    })();
    const code = await proc.exited;
    await reading;
    expect(signalled, stderr).toBe(true);
    expect(code, stderr).toBe(130);
    expect(stderr).toContain("passport interrupted; measured before it: slots not measured");
    expect(stderr).toContain("page size 16 (exact: the only page size every answer agrees with)");
    expect(stderr).toMatch(/interrupted during the capacity search \(so far: the probe stayed whole up to \d+ tokens/);
    expect(stderr).not.toContain("cancelled: cancelled");
  }, 60_000);
});
