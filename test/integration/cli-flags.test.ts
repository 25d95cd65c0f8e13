import { describe, expect, test } from "bun:test";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const base = ["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9"];

describe("flag validation: one line naming the flag, exit 2, nothing sent", () => {
  const cases: Array<[string[], RegExp]> = [
    [["--num-prompts", "abc"], /--num-prompts: expected an integer, got "abc"/],
    [["--num-prompts", "0"], /--num-prompts 0: no request would be measured/],
    [["--num-prompts", "-3"], /--num-prompts -3: no request would be measured/],
    [["--total-tokens", "1.5"], /--total-tokens: expected an integer/],
    [["--output-len", ""], /--output-len: expected an integer/],
    [["--max-concurrency", "NaN"], /--max-concurrency: expected an integer/],
    [["--port", "70000", "--host", "x"], /--port: must be <= 65535/],
    [["--pcts", "10,abc"], /--pcts: expected an integer, got "abc"/],
    [["--pcts", "10,101"], /--pcts 101: a shared-prefix percentage must be in \[0, 100\]/],
    [["--pcts", "10,-1"], /--pcts -1: a shared-prefix percentage must be in \[0, 100\]/],
    [["--pcts", " , "], /--pcts " , ": no percentage to sweep/],
    [["--total-tokens", "1", "--pcts", "0,50"], /--total-tokens 1 is too small for --pcts 50: the shared prefix would be 1\*50\/\/100 = 0 tokens/],
    [["--total-tokens", "0"], /--total-tokens 0: every prompt would be empty/],
    [["--output-len", "0"], /--output-len 0: without an output token there is no time to first token/],
    [["--max-concurrency", "-1"], /--max-concurrency -1: a concurrency limit cannot be negative \(0 means unlimited/],
    [["--m", "x"], /ambiguous flag "--m" could match --model, --max-concurrency/],
    [["--seed", "4.2"], /--seed: expected an integer/],
    [["--extra-request-body", "[1]"], /--extra-request-body: expected a JSON object/],
    [["--extra-request-body", "{bad"], /--extra-request-body: not valid JSON/],
    [["--backend", "tgi"], /--backend: "tgi" is not supported/],
    [["--bogus-flag", "1"], /unknown flag "--bogus-flag"/],
    [["--num-prompts"], /--num-prompts: expects a value/],
    [["stray"], /unexpected argument "stray"/],
    [["--request-timeout", "0"], /--request-timeout: must be >= 0.001/],
    [["--page-size", "0"], /--page-size: must be >= 1/],
  ];
  for (const [args, message] of cases) {
    test(args.join(" ") || "(empty)", async () => {
      const r = await runCli([...base, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).not.toContain("    at ");
      expect(r.stdout).toBe("");
    });
  }

  test("--model is required", async () => {
    const r = await runCli(["--base-url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--model is required/);
  });

  test("--base-url must be an http(s) URL", async () => {
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "ftp://host:1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--base-url: "ftp:\/\/host:1" must start with http/);
    const r2 = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "not a url"]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/--base-url: "not a url" is not a valid URL/);
  });

  test("a missing tokenizer file is named", async () => {
    const r = await runCli(["--model", "/nonexistent/dir/tokenizer.json", "--base-url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("/nonexistent/dir/tokenizer.json");
  });

  test("--help exits 0 and lists the script's flags", async () => {
    const r = await runCli(["run", "--help"]);
    expect(r.code).toBe(0);
    for (const flag of [
      "--backend",
      "--base-url",
      "--host",
      "--port",
      "--model",
      "--tokenizer",
      "--num-prompts",
      "--total-tokens",
      "--output-len",
      "--max-concurrency",
      "--pcts",
      "--seed",
      "--disable-ignore-eos",
      "--output-file",
      "--extra-request-body",
    ]) {
      expect(r.stdout).toContain(flag);
    }
  });

  test("the demo refuses a server of the user's, instead of ignoring it", async () => {
    const r = await runCli(["demo", "--base-url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe("warmbench: error: --base-url: the demo runs against its own mock server; use `warmbench run --base-url ...` for yours");
  });

  test("demo --help shows the demo's own defaults and no required --model", async () => {
    const r = await runCli(["demo", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--num-prompts.*\(default: 16\)/);
    expect(r.stdout).toMatch(/--total-tokens.*\(default: 4000\)/);
    expect(r.stdout).toMatch(/--pcts.*\(default: 0,50,90\)/);
    expect(r.stdout).not.toContain("(required)");
    expect(r.stdout).not.toContain("--base-url");
    expect(r.stdout).toContain("--strict");
  });

  test("run --help states the page size defaults of both backends", async () => {
    const r = await runCli(["run", "--help"]);
    expect(r.stdout).toMatch(/--page-size.*16 for openai\/vllm/);
  });

  test("report without a file is a usage error", async () => {
    const r = await runCli(["report"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("warmbench: error: report: expects a JSONL results file");
  });

  test("--version prints the version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
