import { describe, expect, test } from "bun:test";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const base = ["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9"];

describe("flag validation: one line naming the flag, exit 2, nothing sent", () => {
  const cases: Array<[string[], RegExp]> = [
    [["--num-prompts", "abc"], /--num-prompts: expected an integer, got "abc"/],
    [["--num-prompts", "0"], /--num-prompts: must be >= 1/],
    [["--num-prompts", "-3"], /--num-prompts: must be >= 1/],
    [["--total-tokens", "1.5"], /--total-tokens: expected an integer/],
    [["--output-len", ""], /--output-len: expected an integer/],
    [["--max-concurrency", "NaN"], /--max-concurrency: expected an integer/],
    [["--port", "70000", "--host", "x"], /--port: must be <= 65535/],
    [["--pcts", "10,abc"], /--pcts: expected an integer, got "abc"/],
    [["--pcts", "10,101"], /--pcts: must be <= 100/],
    [["--pcts", "10,-1"], /--pcts: must be >= 0/],
    [["--pcts", "50,50"], /--pcts: 50 appears twice/],
    [["--pcts", " , "], /--pcts: expected comma-separated percentages/],
    [["--total-tokens", "1", "--pcts", "0,50"], /--total-tokens: 1 is too small for --pcts 50/],
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
    for (const flag of ["--backend", "--base-url", "--host", "--port", "--model", "--tokenizer", "--num-prompts", "--total-tokens", "--output-len", "--max-concurrency", "--pcts", "--seed", "--disable-ignore-eos", "--output-file", "--extra-request-body"]) {
      expect(r.stdout).toContain(flag);
    }
  });

  test("--version prints the version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
