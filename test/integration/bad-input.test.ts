/**
 * Bad input files and values given to the compiled binary: exit 2 and one line naming the culprit, no stack
 * trace unless --verbose; plus an --extra-request-body that overrides input_ids (allowed, but warned about).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-bad-input-"));
// Nothing listens on port 9: bad input must be reported before the server matters.
const small = ["--base-url", "http://127.0.0.1:9", "--total-tokens", "100", "--output-len", "4", "--num-prompts", "2", "--settle", "0"];

function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warmbench: "));
const STACK_FRAME = /^\s+at /m;

/** Exit 2, exactly one error line matching `message`, nothing on stdout, no stack trace. */
function expectUsageError(r: CliResult, message: RegExp): void {
  if (r.code !== 2) console.error(r.stderr);
  expect(r.code).toBe(2);
  const errors = errorLines(r.stderr);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(/^warmbench: error: /);
  expect(errors[0]).toMatch(message);
  expect(r.stderr).not.toMatch(STACK_FRAME);
  expect(r.stdout).toBe("");
}

describe("bad tokenizer input: exit 2, one line naming the file", () => {
  test("a corrupt tokenizer.json (junk bytes)", async () => {
    const junk = file("junk-tokenizer.json", new Uint8Array([0x00, 0xff, 0x7b, 0x7b, 0x6a, 0x75, 0x6e, 0x6b]));
    expectUsageError(await runCli(["--model", junk, ...small]), new RegExp(`tokenizer file ${junk} is not valid JSON`));
  });

  test("--verbose adds the stack trace to the same line", async () => {
    const junk = file("junk-verbose.json", "{ this is not json");
    const r = await runCli(["--model", junk, ...small, "--verbose"]);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(errorLines(r.stderr)[0]).toContain(`tokenizer file ${junk} is not valid JSON`);
    expect(r.stderr).toMatch(STACK_FRAME);
  });

  test("a truncated tokenizer.json (a real one cut in half)", async () => {
    const real = await Bun.file(LLAMA2_TOKENIZER).text();
    const cut = file("cut-tokenizer.json", real.slice(0, Math.floor(real.length / 2)));
    expectUsageError(await runCli(["--model", cut, ...small]), new RegExp(`tokenizer file ${cut} is not valid JSON`));
  });

  test("valid JSON without a usable vocab", async () => {
    const noVocab = file("no-vocab.json", JSON.stringify({ model: { type: "BPE", merges: [] } }));
    expectUsageError(await runCli(["--model", noVocab, ...small]), new RegExp(`tokenizer file ${noVocab}: .*has no vocab`));
  });

  test("valid JSON that is not an object", async () => {
    const list = file("list.json", "[1, 2, 3]");
    expectUsageError(await runCli(["--model", list, ...small]), new RegExp(`tokenizer file ${list}: .*not a JSON object`));
  });

  test("an unknown model type with a vocab is refused, not silently mis-tokenized", async () => {
    // The tokenizer library falls back to a pass-through model for unknown types: its ids are undefined, so the
    // retokenized output counts would be garbage. The file must be refused up front.
    const unknown = file("unknown-model.json", JSON.stringify({ model: { type: "Mystery", vocab: { a: 0, b: 1, c: 2 } } }));
    expectUsageError(await runCli(["--model", unknown, ...small]), new RegExp(`${unknown}.*Mystery`));
  });

  test("a directory without tokenizer.json", async () => {
    const empty = join(dir, "empty-model-dir");
    mkdirSync(empty);
    expectUsageError(await runCli(["--model", empty, ...small]), new RegExp(`tokenizer directory ${empty} has no tokenizer.json`));
  });

  test("an unknown model id, offline, with an empty Hugging Face cache", async () => {
    const cache = mkdtempSync(join(dir, "hf-cache-"));
    const r = await runCli(["--model", "no-such-org/no-such-model", ...small], {
      env: { HF_HUB_OFFLINE: "1", HF_HUB_CACHE: cache, HF_ENDPOINT: "http://127.0.0.1:9" },
    });
    expectUsageError(r, new RegExp(`"no-such-org/no-such-model" is not in the Hugging Face cache \\(${cache}\\) and HF_HUB_OFFLINE=1`));
  });

  test("a --tokenizer path that does not exist and is no repo id", async () => {
    const missing = join(dir, "missing", "tokenizer.json");
    expectUsageError(await runCli(["--model", "m", "--tokenizer", missing, ...small]), new RegExp(`tokenizer "${missing}" is neither`));
  });
});

describe("bad output locations: exit 2 before any request", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer(mockOptions({ port: 0 }));
  });
  afterAll(() => mock.stop());
  const args = () => ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--total-tokens", "100", "--output-len", "4", "--num-prompts", "2", "--settle", "0"];

  test("an --output-file whose parent is a regular file", async () => {
    const parent = file("a-regular-file", "x");
    expectUsageError(await runCli([...args(), "--output-file", join(parent, "out.jsonl")]), /^warmbench: error: --output-file: /);
    expect(mock.stats().generateRequests).toBe(0);
  });

  test("an --output-file that is a directory", async () => {
    expectUsageError(await runCli([...args(), "--output-file", dir]), new RegExp(`--output-file: ${dir} is a directory`));
  });

  test("an --output-file in a directory where no file can be created (even by root)", async () => {
    // /proc refuses new files to everybody; access(2) says "writable" to root, so only really opening tells.
    const r = await runCli([...args(), "--output-file", "/proc/warmbench-results.jsonl"]);
    expectUsageError(r, /--output-file: .*\/proc/);
    expect(mock.stats().generateRequests).toBe(0);
  });

  test("a --request-details location that cannot be written", async () => {
    expectUsageError(await runCli([...args(), "--request-details", join(dir, "no-such-dir", "d.jsonl")]), /--request-details: directory .* does not exist/);
  });
});

describe("--extra-request-body that overrides input_ids", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer(mockOptions({ port: 0, recordInputs: true }));
  });
  afterAll(() => mock.stop());

  test("runs, sends the override, and warns on stderr that the prompts are not warmbench's", async () => {
    const out = join(dir, "override.jsonl");
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0",
      "--total-tokens",
      "100",
      "--output-len",
      "4",
      "--num-prompts",
      "3",
      "--settle",
      "0",
      "--output-file",
      out,
      "--extra-request-body",
      '{"input_ids": [1, 2, 3]}',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/--extra-request-body overrides input_ids: the measured prompts are not what warmbench built/);
    const measured = mock.stats().received.filter((q) => q.maxNewTokens === 4);
    expect(measured).toHaveLength(3);
    for (const q of measured) expect(q.inputIds).toEqual([1, 2, 3]);
    const lines = readSweepLines(out);
    expect(lines).toHaveLength(1);
    expect(lines[0].completed).toBe(3);
  });

  test("an --extra-request-body that is not a JSON object is a usage error", async () => {
    const r = await runCli(["--model", LLAMA2_TOKENIZER, ...small, "--extra-request-body", "[1, 2]"]);
    expectUsageError(r, /--extra-request-body/);
  });
});
