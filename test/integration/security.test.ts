/**
 * Secrets: the server's API key (from --api-key, SGLANG_API_KEY or OPENAI_API_KEY) and HF_TOKEN never appear in
 * stdout, stderr (even with --verbose), the JSONL or the request details. The API key goes to the target server
 * only, as "authorization: Bearer <key>" on every request; HF_TOKEN goes to the hub only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { startFakeHub, type FakeHub } from "../helpers/fake-hub.ts";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.ts";
import { readJsonl } from "../helpers/results.ts";

const API_KEY = "s3cr3t-XYZ";
const HF_TOKEN = "hf_T0ken-ABC-987";
const REPO = "secure-org/tiny-llama";
const SECRET_ENV = ["SGLANG_API_KEY", "OPENAI_API_KEY", "HF_TOKEN"] as const;

const dir = mkdtempSync(join(tmpdir(), "warmbench-security-"));
let mock: MockServer;
let hub: FakeHub;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  // The children inherit this process's environment: secrets set outside the test must not leak into the cases.
  for (const name of SECRET_ENV) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
  mock = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 1, errorEventEvery: 4 }));
  hub = startFakeHub({ [`${REPO}/tokenizer.json`]: readFileSync(LLAMA2_TOKENIZER) });
});

afterAll(async () => {
  for (const name of SECRET_ENV) if (saved[name] !== undefined) process.env[name] = saved[name];
  await mock.stop();
  await hub.stop();
});

interface SecureRun {
  result: CliResult;
  proxy: RecordingProxy;
  /** Every file the run wrote, by name. */
  files: { jsonl: string; details: string };
  jsonlPath: string;
  hubRequestsBefore: number;
}

/** A verbose sweep through a recording proxy, the tokenizer from the fake hub into a fresh cache. */
async function secureRun(name: string, keyArgs: string[], keyEnv: Record<string, string>): Promise<SecureRun> {
  const proxy = startRecordingProxy(mock.url);
  const out = join(dir, `${name}.jsonl`);
  const details = join(dir, `${name}-details.jsonl`);
  const hubRequestsBefore = hub.requests.length;
  try {
    const result = await runCli(
      [
        "--model",
        REPO,
        "--base-url",
        proxy.url,
        "--pcts",
        "0,50",
        "--num-prompts",
        "4",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--verbose",
        "--output-file",
        out,
        "--request-details",
        details,
        ...keyArgs,
      ],
      { env: { HF_ENDPOINT: hub.url, HF_HUB_CACHE: mkdtempSync(join(dir, "hf-")), HF_HUB_OFFLINE: "0", HF_TOKEN, ...keyEnv } },
    );
    return { result, proxy, files: { jsonl: readFileSync(out, "utf8"), details: readFileSync(details, "utf8") }, jsonlPath: out, hubRequestsBefore };
  } finally {
    await proxy.stop();
  }
}

const headerValues = (headers: Record<string, string>) => Object.values(headers).join("\n");

const sources: Array<[string, string[], Record<string, string>]> = [
  ["--api-key", ["--api-key", API_KEY], {}],
  ["SGLANG_API_KEY", [], { SGLANG_API_KEY: API_KEY }],
  ["OPENAI_API_KEY", [], { OPENAI_API_KEY: API_KEY }],
];

describe.each(sources)("the API key from %s", (name, keyArgs, keyEnv) => {
  let run: SecureRun;
  beforeAll(async () => {
    run = await secureRun(name.toLowerCase().replace(/^-+/, ""), keyArgs, keyEnv);
  });

  test("the run completes (some requests fail on purpose, so errors are reported too)", () => {
    if (run.result.code !== 3) console.error(run.result.stderr.slice(-2000));
    expect(run.result.code).toBe(3);
    const lines = readJsonl(run.jsonlPath);
    expect(lines).toHaveLength(2);
    expect(lines[0].run.options.api_key).toBe("(set)");
    expect(lines[1].run).toBeUndefined();
    // --verbose really was on: debug output is what could leak.
    expect(run.result.stderr.length).toBeGreaterThan(0);
    expect(run.result.stdout).toContain("Failures");
  });

  test("neither secret appears in stdout, stderr, the JSONL or the request details", () => {
    const outputs = { stdout: run.result.stdout, stderr: run.result.stderr, ...run.files };
    for (const [where, text] of Object.entries(outputs)) {
      expect({ where, hasApiKey: text.includes(API_KEY) }).toEqual({ where, hasApiKey: false });
      expect({ where, hasHfToken: text.includes(HF_TOKEN) }).toEqual({ where, hasHfToken: false });
    }
    expect(run.files.details.trim().split("\n").length).toBe(8);
  });

  test("every request to the target server carries authorization: Bearer <key>, and never HF_TOKEN", () => {
    const requests = run.proxy.requests;
    expect(requests.filter((q) => q.path === "/generate" && q.method === "POST").length).toBeGreaterThanOrEqual(8);
    expect(requests.some((q) => q.path.startsWith("/flush_cache"))).toBe(true);
    for (const q of requests) {
      expect({ path: q.path, authorization: q.headers.authorization }).toEqual({ path: q.path, authorization: `Bearer ${API_KEY}` });
      expect(headerValues(q.headers)).not.toContain(HF_TOKEN);
    }
  });

  test("the hub gets HF_TOKEN for the tokenizer download, and never the API key", () => {
    const hubRequests = hub.requests.slice(run.hubRequestsBefore);
    expect(hubRequests.some((q) => q.path === `/${REPO}/resolve/main/tokenizer.json`)).toBe(true);
    for (const q of hubRequests) {
      expect(q.headers.authorization).toBe(`Bearer ${HF_TOKEN}`);
      expect(headerValues(q.headers)).not.toContain(API_KEY);
    }
  });
});

test("an unreachable server with --verbose: the error and its stack do not show the API key", async () => {
  const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--api-key", API_KEY, "--verbose"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("cannot reach the server");
  expect(r.stderr + r.stdout).not.toContain(API_KEY);
});

describe("credentials in --base-url", () => {
  const PASSWORD = "SEKRIT-url-pw";
  test("go to every request as Basic authorization, and never into the JSONL, the history, the report or stderr", async () => {
    const proxy = startRecordingProxy(mock.url);
    const withCreds = proxy.url.replace("http://", `http://admin:${PASSWORD}@`);
    const out = join(dir, "creds.jsonl");
    const db = join(dir, "creds.db");
    const html = join(dir, "creds.html");
    try {
      const r = await runCli([
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        withCreds,
        "--pcts",
        "0",
        "--num-prompts",
        "4",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--verbose",
        "--output-file",
        out,
        "--history",
        "--db",
        db,
      ]);
      expect(r.code === 0 || r.code === 3).toBe(true);
      const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`;
      expect(proxy.requests.length).toBeGreaterThan(4);
      for (const req of proxy.requests) expect(req.headers.authorization).toBe(basic);
      const report = await runCli(["report", out, "--html", html]);
      expect(report.code).toBe(0);
      const outputs: [string, string][] = [
        ["stdout", r.stdout],
        ["stderr", r.stderr],
        ["jsonl", readFileSync(out, "utf8")],
        ["history", readFileSync(db).toString("latin1")],
        ["html", readFileSync(html, "utf8")],
      ];
      for (const [what, text] of outputs) {
        expect([what, text.includes(PASSWORD)]).toEqual([what, false]);
      }
      const [line] = readJsonl(out);
      expect(line.base_url).toBe(proxy.url);
      expect(line.run.options.url_credentials).toBe("(set)");
    } finally {
      await proxy.stop();
    }
  });

  test("an unreachable server's error names the URL without them", async () => {
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", `http://admin:${PASSWORD}@127.0.0.1:9`, "--pcts", "0", "--settle", "0", "--verbose"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot reach the server at http://127.0.0.1:9");
    expect(r.stderr.includes(PASSWORD) || r.stdout.includes(PASSWORD)).toBe(false);
  });
});

describe("text from a server reaches the terminal escaped", () => {
  test("a /server_info version holding terminal escapes is printed as \\x1b..., never raw, on stderr and stdout", async () => {
    const hostile = "0.5\u001b]0;pwned\u0007\u001b[2J\u009b31m";
    // The server's own /server_info, its version replaced: the rest of the run talks to the real mock.
    const info = (await (await fetch(`${mock.url}/server_info`)).json()) as Record<string, unknown>;
    const proxy = startRecordingProxy(mock.url, (req) => (req.path.startsWith("/server_info") ? Response.json({ ...info, version: hostile }) : null));
    try {
      const out = join(dir, "escapes.jsonl");
      const r = await runCli([
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        proxy.url,
        "--pcts",
        "0",
        "--num-prompts",
        "2",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--output-file",
        out,
      ]);
      expect([0, 3]).toContain(r.code);
      for (const text of [r.stderr, r.stdout]) {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the terminal's control characters
        expect(text).not.toMatch(/[\u001b\u0007\u009b]/);
      }
      expect(r.stderr).toContain("0.5\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m");
      // The file keeps what the server said (JSON escapes it): the report on a terminal escapes it again.
      expect(readJsonl(out)[0].server_version).toBe(hostile);
      const report = await runCli(["report", out]);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the terminal's control characters
      expect(report.stdout).not.toMatch(/[\u001b\u0007\u009b]/);
      // Nor do the report files: the HTML and the Markdown show the escapes as \xNN.
      const html = join(dir, "escapes.html");
      const md = join(dir, "escapes.md");
      const files = await runCli(["report", out, "--html", html, "--md", md]);
      expect(files.code).toBe(0);
      for (const [what, text] of [
        ["html", readFileSync(html, "utf8")],
        ["md", readFileSync(md, "utf8")],
      ]) {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the terminal's control characters
        expect([what, /[\u001b\u0007\u009b]/.test(text!)]).toEqual([what, false]);
      }
      expect(readFileSync(md, "utf8")).toContain("\\x1b");
      // A history tag holding the same escapes: stored as given, never printed or written raw.
      const db = join(dir, "escapes.db");
      const tagged = await runCli(["history", "add", out, "--db", db, "--tag", `rc\u001b[2J\u0007`]);
      expect(tagged.code).toBe(0);
      const listed = await runCli(["history", "list", "--db", db]);
      const trendMd = join(dir, "escapes-history.md");
      const trendHtml = join(dir, "escapes-history.html");
      const trend = await runCli(["report", "--history", "--db", db, "--md", trendMd, "--html", trendHtml]);
      expect(trend.code).toBe(0);
      for (const [what, text] of [
        ["history list", listed.stdout + listed.stderr],
        ["history add", tagged.stdout + tagged.stderr],
        ["trend", trend.stdout + trend.stderr],
        ["trend md", readFileSync(trendMd, "utf8")],
        ["trend html", readFileSync(trendHtml, "utf8")],
      ]) {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the terminal's control characters
        expect([what, /[\u001b\u0007\u009b]/.test(text!)]).toEqual([what, false]);
      }
    } finally {
      await proxy.stop();
    }
  });
});

describe("credentials a proxy echoes back", () => {
  test("a 401 page quoting the Authorization header gets no key into stdout, stderr, the JSONL or the details", async () => {
    // Every generation request is refused with a page that quotes the request's Authorization header; the rest of
    // the run (preflight, flush) goes to the mock.
    const proxy = startRecordingProxy(mock.url, (req) =>
      req.path === "/generate" && req.method === "POST"
        ? new Response(`<h1>401</h1><pre>Authorization: ${req.headers.authorization} x-api-key ${API_KEY}</pre>`, { status: 401 })
        : null,
    );
    const out = join(dir, "echo.jsonl");
    const details = join(dir, "echo-details.jsonl");
    try {
      const r = await runCli([
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        proxy.url,
        "--api-key",
        API_KEY,
        "--pcts",
        "0",
        "--num-prompts",
        "2",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--settle",
        "0",
        "--verbose",
        "--output-file",
        out,
        "--request-details",
        details,
      ]);
      expect(r.code).not.toBe(0);
      const outputs: [string, string][] = [
        ["stdout", r.stdout],
        ["stderr", r.stderr],
        ["jsonl", existsSync(out) ? readFileSync(out, "utf8") : ""],
        ["details", existsSync(details) ? readFileSync(details, "utf8") : ""],
      ];
      for (const [what, text] of outputs) expect([what, text.includes(API_KEY)]).toEqual([what, false]);
      expect(r.stderr + r.stdout).toContain("(redacted)");
    } finally {
      await proxy.stop();
    }
  });
});

describe("a server cannot grow the client's memory without bound", () => {
  test("a /server_info that never ends fails the preflight with one line naming the endpoint and the limit", async () => {
    const piece = new Uint8Array(1024 * 1024).fill(120);
    let first = true;
    const endless = () =>
      new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            controller.enqueue(first ? new TextEncoder().encode('{"version":"') : piece);
            first = false;
          },
        },
        { highWaterMark: 0 },
      );
    const proxy = startRecordingProxy(mock.url, (req) => (req.path.startsWith("/server_info") ? new Response(endless()) : null));
    try {
      const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", proxy.url, "--pcts", "0", "--num-prompts", "2", "--settle", "0"]);
      expect(r.code).toBe(1);
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("warmbench: error:"));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain("/server_info answered more than 64 MiB, the most warmbench reads from a control endpoint");
      expect(proxy.requests.some((q) => q.path === "/generate" && q.method === "POST")).toBe(false);
    } finally {
      await proxy.stop();
    }
  }, 120_000);
});
