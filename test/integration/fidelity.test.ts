/**
 * Are warm answers the same answers? The compiled binary's --check-fidelity against the mock's three engines: a
 * correct cache gives identical answers, the mock's wrong-KV fault is caught as `diverged` (exit 6 with the gate,
 * exit 7 in compare against a correct run), its near-tie flip as `near_tie`; the measured figures and prompts are those
 * of the same run without the check.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { generateTrace, traceText } from "../helpers/mooncake-trace.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-fidelity-"));
const mocks: MockServer[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

async function mock(overrides: Partial<MockOptions>): Promise<MockServer> {
  const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 5, itlMs: 0, pageSize: 16, vocabSize: 32000, ...overrides }));
  mocks.push(m);
  return m;
}

let n = 0;
async function run(m: MockServer, more: string[] = []) {
  const file = join(dir, `r${n++}.jsonl`);
  const r = await runCli([
    "run",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    m.url,
    "--num-prompts",
    "4",
    "--total-tokens",
    "96",
    "--output-len",
    "8",
    "--pcts",
    "50",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
    ...more,
  ]);
  return { ...r, file, lines: readJsonl(file, { validate: true }) };
}

const CHECK = ["--check-fidelity", "--fidelity-sample", "3"];
const fidelityOf = (l: any) => Object.fromEntries(Object.entries(l).filter(([k]) => k.startsWith("fidelity_")));

describe("--check-fidelity against each engine the mock speaks", () => {
  for (const personality of ["sglang", "vllm", "llamacpp"] as const) {
    test(`${personality}: a correct cache answers the same; wrong KV diverges (exit 6 with the gate); a near tie is a near tie`, async () => {
      const good = await run(await mock({ personality }), [...CHECK, "--gate", "fidelity_diverged==0"]);
      expect(good.code, good.stderr).toBe(0);
      expect(fidelityOf(good.lines[0])).toMatchObject({ fidelity_checked: 3, fidelity_identical: 3, fidelity_diverged: 0, fidelity_unproven: 0 });
      expect(good.lines[0].evidence.samples.fidelity).toBe(3);

      const wrong = await run(await mock({ personality, faultWrongKv: true }), [...CHECK, "--gate", "fidelity_diverged==0"]);
      expect(wrong.code).toBe(6);
      expect(fidelityOf(wrong.lines[0])).toMatchObject({ fidelity_checked: 3, fidelity_diverged: 3, fidelity_first_divergence: [1, 1, 1] });
      expect(wrong.stdout).toContain("DIVERGED: suspect wrong KV");

      const tie = await run(await mock({ personality, faultTieFlip: true }), [...CHECK, "--gate", "fidelity_diverged==0"]);
      expect(tie.code, tie.stderr).toBe(0);
      expect(fidelityOf(tie.lines[0])).toMatchObject({ fidelity_checked: 3, fidelity_near_tie: 3, fidelity_diverged: 0, fidelity_first_divergence: [1, 1, 1] });
      expect(tie.lines[0].fidelity_max_gap_nats).toBeCloseTo(0.01, 6);
      // With a threshold below the flip's gap, the same flip is a divergence.
      const strict = await run(await mock({ personality, faultTieFlip: true }), [...CHECK, "--fidelity-tie-nats", "0.001"]);
      expect(fidelityOf(strict.lines[0])).toMatchObject({ fidelity_near_tie: 0, fidelity_diverged: 3 });
    }, 60_000);
  }
});

describe("the check is judged like every metric, and costs the measurement nothing", () => {
  test("compare: a candidate whose answers diverged fails against a correct baseline (exit 7), naming the count", async () => {
    const base = await run(await mock({}), CHECK);
    const cand = await run(await mock({ faultWrongKv: true }), CHECK);
    const r = await runCli([
      "compare",
      base.file,
      cand.file,
      "--max-regress",
      "p99_ttft_ms=100000%,mean_ttft_ms=100000%,mean_itl_ms=100000%,output_throughput=100000%",
    ]);
    expect(r.code).toBe(7);
    expect(r.stdout + r.stderr).toMatch(/more_failures: fidelity_diverged 0 in BASE, 3 in NEW/);
    // A candidate that dropped the check has diverged nowhere only because it never looked: it fails too.
    const unchecked = await run(await mock({}));
    const dropped = await runCli(["compare", base.file, unchecked.file, "--only", "mean_ttft_ms", "--max-regress", "mean_ttft_ms=100000%"]);
    expect(dropped.code).toBe(7);
    expect(dropped.stdout + dropped.stderr).toMatch(/no_samples: fidelity_diverged rests on 3 samples in BASE, none in NEW/);
    // Another correct run against the same baseline: no divergence grew, so nothing fails.
    const again = await run(await mock({}), CHECK);
    const ok = await runCli(["compare", base.file, again.file, "--only", "mean_ttft_ms", "--max-regress", "mean_ttft_ms=100000%"]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  }, 60_000);

  test("a gate on a fidelity key with nothing compared fails on its evidence (0% has no prefix to reuse)", async () => {
    const r = await run(await mock({}), [...CHECK, "--pcts", "0", "--gate", "fidelity_diverged==0"]);
    expect(r.code).toBe(6);
    expect(r.lines[0]).toMatchObject({ fidelity_checked: 0, fidelity_unproven: 3 });
    expect(r.lines[0].gates[0].evidence[0]).toMatch(/no_samples: fidelity_diverged/);
  });

  test("a fidelity gate or setting without --check-fidelity is exit 2 before anything is sent", async () => {
    const m = await mock({});
    for (const more of [
      ["--gate", "fidelity_diverged==0"],
      ["--fidelity-sample", "2"],
    ]) {
      const r = await run(m, more);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--check-fidelity/);
    }
    expect(m.stats().generateRequests).toBe(0);
  });

  test("the measured prompts and counts are the run's without the check; the report shows the fidelity table", async () => {
    const m = await mock({});
    const without = await run(m);
    const withCheck = await run(m, CHECK);
    const measured = (l: any) => [l.workload.prompt_ids_hash, l.completed, l.total_input, l.total_output, l.mean_cached_tokens, l.cache_check];
    expect(measured(withCheck.lines[0])).toEqual(measured(without.lines[0]));
    expect(without.lines[0]).not.toHaveProperty("fidelity_checked");
    const md = join(dir, "f.md");
    const rep = await runCli(["report", withCheck.file, "--md", md]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(readFileSync(md, "utf8")).toMatch(/### Cache fidelity[\s\S]*\| r\d+\.jsonl \| 50% \| 3 \| 3 \| 0 \| 0 \| 0 \| 0 \|/);
  });
});

describe("--check-fidelity after the last round of a multi-turn run, and after a replay", () => {
  const multiturn = async (m: MockServer, more: string[]) => {
    const file = join(dir, `m${n++}.jsonl`);
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      m.url,
      "--num-clients",
      "4",
      "--num-rounds",
      "3",
      "--turn-tokens",
      "40",
      "--output-len",
      "8",
      "--settle",
      "0",
      "--output-file",
      file,
      ...more,
    ]);
    return { ...r, lines: readJsonl(file, { validate: true }) };
  };

  test("multiturn: the last round's line carries the check on conversations' last turns; a fidelity gate judges that round", async () => {
    const good = await multiturn(await mock({}), [...CHECK, "--gate", "fidelity_diverged==0"]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.lines.map((l) => l.fidelity_checked)).toEqual([undefined, undefined, 3]);
    expect(good.lines[2]).toMatchObject({ fidelity_identical: 3, fidelity_unproven: 0 });
    // Rounds 0 and 1 carry no fidelity key and no fidelity verdict: the gate was scoped to the last round.
    expect(good.lines.map((l) => l.gates.length)).toEqual([0, 0, 1]);
    const wrong = await multiturn(await mock({ faultWrongKv: true }), [...CHECK, "--gate", "fidelity_diverged==0"]);
    expect(wrong.code).toBe(6);
    expect(wrong.lines[2]).toMatchObject({ fidelity_checked: 3, fidelity_diverged: 3 });
  });

  test("replay: the whole replay's line carries the check on requests that shared a prefix; windows do not", async () => {
    const trace = join(dir, "trace.jsonl");
    writeFileSync(
      trace,
      traceText(
        generateTrace({
          blockSize: 16,
          systems: 1,
          systemBlocks: 4,
          conversations: 3,
          turns: 3,
          maxTurnTokens: 40,
          turnGapMs: 100,
          startGapMs: 50,
          outputLength: 8,
          seed: 3,
        }),
      ),
    );
    for (const [overrides, verdict] of [
      [{}, "fidelity_identical"],
      [{ faultTieFlip: true }, "fidelity_near_tie"],
    ] as const) {
      const file = join(dir, `replay${n++}.jsonl`);
      const r = await runCli([
        "replay",
        trace,
        "--block-size",
        "16",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        (await mock(overrides)).url,
        "--time-scale",
        "0.1",
        "--settle",
        "0",
        "--quiet",
        "--output-file",
        file,
        ...CHECK,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const lines = readJsonl(file, { validate: true });
      const whole = lines.filter((l) => l.window === undefined);
      expect(whole).toHaveLength(1);
      expect(whole[0]).toMatchObject({ fidelity_checked: 3, [verdict]: 3, fidelity_diverged: 0 });
      expect(lines.filter((l) => l.window !== undefined).every((l) => l.fidelity_checked === undefined)).toBe(true);
    }
  });
});
