/**
 * compare on repeated lines through the compiled binary. Until `run --repeat` lands, a repeated file is stitched
 * from three real runs against a mock (each line given its `repeat` axis and one run id). Identical mocks: intervals
 * shown, 3/3 repeats, no REGRESSED; a mock 50 % slower per token: mean_itl_ms REGRESSED with its whole interval
 * past the limit; files without repeats say there is no noise estimate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readFileSync } from "node:fs";

const dir = mkdtempSync(join(tmpdir(), "warmbench-repeats-"));
const mocks: MockServer[] = [];

async function runOnce(mock: MockServer, name: string): Promise<string> {
  const file = join(dir, `${name}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "50",
    "--num-prompts",
    "4",
    "--total-tokens",
    "600",
    "--output-len",
    "16",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
  ]);
  if (r.code !== 0) throw new Error(`run ${name} exited ${r.code}: ${r.stderr}`);
  return file;
}

/** Three runs as one run of three repeats. */
async function repeated(mock: MockServer, name: string): Promise<string> {
  const lines: Record<string, unknown>[] = [];
  for (let i = 0; i < 3; i++) {
    const [line] = readFileSync(await runOnce(mock, `${name}-${i}`), "utf8")
      .trim()
      .split("\n")
      .map(parseJsonlLine);
    lines.push({ ...line, run_id: `${name}-rep`, repeat: i });
  }
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, lines.map(formatJsonl).join(""));
  return file;
}

let base: string;
let same: string;
let slow: string;
let single: string;

beforeAll(async () => {
  const opts = (itlMs: number) => mockOptions({ port: 0, pageSize: 16, itlMs, ttftBaseMs: 50 });
  mocks.push(await startMockServer(opts(20)), await startMockServer(opts(30)));
  base = await repeated(mocks[0]!, "base");
  same = await repeated(mocks[0]!, "same");
  slow = await repeated(mocks[1]!, "slow");
  single = await runOnce(mocks[0]!, "single");
}, 120_000);

afterAll(async () => {
  for (const m of mocks) await m.stop();
});

const row = (stdout: string, metric: string) => stdout.split("\n").find((l) => l.includes(` ${metric} `))!;

describe("compare with repeats", () => {
  test("identical mocks: every metric with its 95 % interval over 3/3 repeats, none REGRESSED", async () => {
    // Judged on ITL alone: the default TTFT limit (10 %) is rightly inconclusive when a loaded machine spreads
    // three 4-prompt repeats by more than that, which would make the exit code depend on the machine.
    const r = await runCli(["compare", base, same, "--max-regress", "mean_itl_ms=5%", "--only", "mean_itl_ms"]);
    expect(r.stdout).toContain("95% CI");
    expect(row(r.stdout, "mean_itl_ms")).toMatch(/[+-]\d+\.\d%\.\.[+-]\d+\.\d%\s+3\/3\s/);
    expect(r.stdout).toContain("verdicts from 95 % Welch intervals");
    expect(row(r.stdout, "mean_itl_ms")).not.toContain("REGRESSED");
    expect(r.code).toBe(0);
  });

  test("a mock 50 % slower per token: mean_itl_ms REGRESSED, its whole interval past the limit", async () => {
    const r = await runCli(["compare", base, slow, "--max-regress", "mean_itl_ms=5%"]);
    const itl = row(r.stdout, "mean_itl_ms");
    expect(itl).toContain("REGRESSED");
    const [lo] = /([+-]\d+\.\d)%\.\./.exec(itl)!.slice(1).map(Number);
    expect(lo).toBeGreaterThan(5);
    expect(r.code).toBe(7);
  });

  test("an interval straddling the limit is inconclusive: exit 8; --allow-inconclusive accepts it", async () => {
    // The real lines of `base`, their mean ITL set so that Δ is +3 % with a spread of ±5 % (a 2 % limit inside it).
    const withItl = (file: string, name: string, itls: number[]) => {
      const lines = readFileSync(file, "utf8").trim().split("\n").map(parseJsonlLine);
      const out = join(dir, `${name}.jsonl`);
      // A run of its own: compare refuses the same run on both sides.
      writeFileSync(
        out,
        lines.map((l, i) => formatJsonl({ ...l, mean_itl_ms: itls[i], run_id: name, evidence: { ...l.evidence, run_ids: [`${name}-${i}`] } })).join(""),
      );
      return out;
    };
    const a = withItl(base, "wide-a", [9.5, 10.5, 10.0]);
    const b = withItl(base, "wide-b", [9.8, 10.8, 10.3]);
    const r = await runCli(["compare", a, b, "--max-regress", "mean_itl_ms=2%", "--only", "mean_itl_ms"]);
    expect(row(r.stdout, "mean_itl_ms")).toMatch(/\+3\.0%.*inconclusive$/);
    expect(r.stdout).toMatch(/1 inconclusive .*mean_itl_ms at 50%: \+3\.0% \(95% CI -\d+\.\d%\.\.\+\d+\.\d% straddles the limit 2%\)/);
    // Inconclusive does not pass silently: its own exit code.
    expect(r.code).toBe(8);
    expect(r.stderr).toContain("1 inconclusive verdict(s)");
    expect(r.stderr).toContain("exit code 8");
    const accepted = await runCli(["compare", a, b, "--max-regress", "mean_itl_ms=2%", "--only", "mean_itl_ms", "--allow-inconclusive"]);
    expect(accepted.code).toBe(0);
    expect(accepted.stderr).toContain("compare --allow-inconclusive: 1 inconclusive verdict(s) accepted: mean_itl_ms at 50%");
  });

  test("without repeats on both sides: no noise estimate, said so", async () => {
    const r = await runCli(["compare", single, base, "--max-regress", "mean_itl_ms=50%"]);
    expect(r.stdout).toContain("no noise estimate");
    expect(r.stdout).toContain("95% CI"); // NEW's repeats are shown (1/3), without an interval
    expect(row(r.stdout, "mean_itl_ms")).toMatch(/\s-\s+1\/3\s/);
  });
});
