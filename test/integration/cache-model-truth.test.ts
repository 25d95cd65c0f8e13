/**
 * The one cache model against the mock's truth (issue 35): the compiled binary against in-process mocks in every
 * legal cache behaviour (insert at prefill or at finish, answers cached or not, running requests' pages locked or
 * not), with caches from a quarter of the working set to twice it, for sweeps (pct 50 and 90, working sets 1, 4 and
 * 16), multi-turn and replay, on one server and over three replicas under every route. Every request's true cached
 * tokens (the mock's --truth, joined on request id) lie in the range its details give, --verify-cache strict passes,
 * and the ledger books nothing to the engine. With the behaviour stated (--server-cache) the ranges are sharp; unknown,
 * they still hold. A mock that drops hits (--fault-forget-every 3) shows exactly those hits as the engine's loss.
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

const dir = mkdtempSync(join(tmpdir(), "warmbench-model-truth-"));
const started: MockServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((m) => m.stop()));
});

const PAGE = 16;
interface Variant {
  insertAt: "prefill" | "finish";
  answers: boolean;
  locked: boolean;
}
const VARIANTS: Variant[] = (["prefill", "finish"] as const).flatMap((insertAt) =>
  [true, false].flatMap((answers) => [false, true].map((locked) => ({ insertAt, answers, locked }))),
);
const nameOf = (v: Variant) => `insert=${v.insertAt},answers=${v.answers ? "cached" : "uncached"},inflight=${v.locked ? "locked" : "evictable"}`;
/** The mock's behaviour as --server-cache states it: the variant, and first come first served (it matches a prompt on arrival). */
const statedOf = (v: Variant) => `${nameOf(v)},order=fcfs`;
const mockOf = (v: Variant): Partial<MockOptions> => ({ insertAt: v.insertAt, noOutputCache: !v.answers, inflightPages: v.locked ? "locked" : "evictable" });

let n = 0;
async function servers(count: number, mock: Partial<MockOptions>): Promise<{ urls: string[]; truths: string[] }> {
  const urls: string[] = [];
  const truths: string[] = [];
  for (let i = 0; i < count; i++) {
    const truth = join(dir, `truth-${++n}.jsonl`);
    const m = await startMockServer(mockOptions({ port: 0, pageSize: PAGE, itlMs: 1, ttftBaseMs: 1, prefillUsPerToken: 5, truthFile: truth, ...mock }));
    started.push(m);
    urls.push(m.url);
    truths.push(truth);
  }
  return { urls, truths };
}

interface Truth {
  cached: number;
  forgotten: number;
}

function truthOf(files: readonly string[]): Map<string, Truth> {
  const out = new Map<string, Truth>();
  for (const f of files) {
    for (const l of readFileSync(f, "utf8").split("\n").filter(Boolean)) {
      const t = JSON.parse(l);
      if (t.request_id) out.set(t.request_id, { cached: t.cached_tokens, forgotten: t.forgotten_tokens ?? 0 });
    }
  }
  return out;
}

/** Every request's truth within its range; the summed width and possible, for the sharpness figures. */
function judge(details: readonly any[], truth: ReadonlyMap<string, Truth>, label: string) {
  let width = 0;
  let possible = 0;
  let checked = 0;
  const outside: string[] = [];
  /** Per point (a request id's middle: pct and working set, e.g. 90w16): [summed width, summed possible]. */
  const byPoint = new Map<string, [number, number]>();
  for (const d of details) {
    if (!d.ok || d.cached_tokens < 0) continue;
    const t = truth.get(d.request_id);
    expect([label, d.request_id, t !== undefined]).toEqual([label, d.request_id, true]);
    const lo = d.expected_cached_tokens_lower ?? d.ledger?.guaranteed;
    const hi = d.expected_cached_tokens_upper ?? d.ledger?.possible;
    expect([label, typeof lo, typeof hi]).toEqual([label, "number", "number"]);
    if (t!.cached < lo || t!.cached > hi) outside.push(`${d.request_id}: truth ${t!.cached} outside [${lo}, ${hi}]`);
    width += hi - lo;
    possible += hi;
    checked++;
    const point = String(d.request_id).split("-").slice(1, -1).join("-");
    const sums = byPoint.get(point) ?? [0, 0];
    byPoint.set(point, [sums[0] + hi - lo, sums[1] + hi]);
  }
  expect([label, outside.slice(0, 5)]).toEqual([label, []]);
  const pointsPct = [...byPoint].map(([point, [w, p]]) => `${point} ${p > 0 ? ((100 * w) / p).toFixed(1) : "0.0"} %`).join(", ");
  return { checked, width, possible, widthPct: possible > 0 ? (100 * width) / possible : 0, pointsPct };
}

/** The one-server sweeps' widths summed over every behaviour and cache size, stated apart from unknown. */
const sweepTotals = { stated: { width: 0, possible: 0 }, unknown: { width: 0, possible: 0 } };

const figures: string[] = [];
afterAll(() => {
  if (figures.length === 0) return;
  const all = (which: keyof typeof sweepTotals) => {
    const { width, possible } = sweepTotals[which];
    return possible > 0 ? `${((100 * width) / possible).toFixed(1)} %` : "none run";
  };
  figures.push(`sweeps, one server, every behaviour and cache size together: stated ${all("stated")}, unknown ${all("unknown")}`);
  console.log(`cache model width (summed possible - guaranteed over summed possible):\n${figures.join("\n")}`);
});

const SWEEP = ["--num-prompts", "32", "--total-tokens", "256", "--output-len", "4", "--max-concurrency", "4", "--settle", "0", "--quiet"];
/** pct 90 over a working set of 16: 16 prefixes of 230 tokens. */
const WORKING_SET_TOKENS = 16 * 230;

async function sweep(urls: readonly string[], extra: string[], tag: string, base: readonly string[] = SWEEP) {
  const out = join(dir, `${tag}.jsonl`);
  const details = join(dir, `${tag}-details.jsonl`);
  const r = await runCli([
    "run",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    urls.join(","),
    ...base,
    "--pcts",
    "50,90",
    "--working-set",
    "1,4,16",
    "--verify-cache",
    "strict",
    "--output-file",
    out,
    "--request-details",
    details,
    ...extra,
  ]);
  expect([tag, r.code, r.code === 0 ? "" : r.stderr.slice(-600)]).toEqual([tag, 0, ""]);
  return { lines: readJsonl(out), details: readJsonl(details) };
}

describe("sweeps on one server, every behaviour, caches from a quarter of the working set to twice it", () => {
  for (const v of VARIANTS) {
    test(nameOf(v), async () => {
      for (const share of [0.25, 1, 2]) {
        const cacheTokens = Math.round(WORKING_SET_TOKENS * share);
        for (const stated of [true, false]) {
          const { urls, truths } = await servers(1, { ...mockOf(v), cacheTokens });
          const tag = `sweep-${nameOf(v)}-${share}-${stated ? "stated" : "unknown"}`;
          const { lines, details } = await sweep(urls, stated ? ["--server-cache", statedOf(v)] : [], tag);
          await Bun.sleep(150); // the mock appends its truth every 100 ms
          const j = judge(details, truthOf(truths), tag);
          expect(lines.every((l: any) => l.cache_check === "ok")).toBe(true);
          const total = sweepTotals[stated ? "stated" : "unknown"];
          total.width += j.width;
          total.possible += j.possible;
          figures.push(
            `sweep, one server, ${nameOf(v)}, cache ${share}x, ${stated ? "stated" : "unknown"}: ${j.widthPct.toFixed(1)} % of ${j.checked} requests` +
              (share === 1 && stated ? ` (by point: ${j.pointsPct})` : ""),
          );
        }
      }
    }, 120_000);
  }
});

test("one request at a time under cache pressure (cache 1x, concurrency 1): every range exact, in every behaviour", async () => {
  for (const v of VARIANTS) {
    const { urls, truths } = await servers(1, { ...mockOf(v), cacheTokens: WORKING_SET_TOKENS });
    const tag = `serial-${nameOf(v)}`;
    const serial = SWEEP.map((a, k) => (SWEEP[k - 1] === "--max-concurrency" ? "1" : a));
    const { details } = await sweep(urls, ["--server-cache", statedOf(v)], tag, serial);
    await Bun.sleep(150);
    const j = judge(details, truthOf(truths), tag);
    expect([tag, j.widthPct]).toEqual([tag, 0]);
    figures.push(`sweep, one server, ${nameOf(v)}, cache 1x, stated, one at a time: ${j.widthPct.toFixed(1)} % of ${j.checked} requests`);
  }
}, 120_000);

describe("sweeps over three replicas, every route", () => {
  for (const route of ["round-robin", "random", "least-in-flight", "session", "prefix", "oracle"]) {
    test(route, async () => {
      for (const v of [VARIANTS[0]!, VARIANTS[7]!]) {
        for (const share of [0.25, 2]) {
          const { urls, truths } = await servers(3, { ...mockOf(v), cacheTokens: Math.round(WORKING_SET_TOKENS * share) });
          const tag = `replicas-${route}-${nameOf(v)}-${share}`;
          const { lines, details } = await sweep(urls, ["--route", route, "--server-cache", statedOf(v)], tag);
          await Bun.sleep(150);
          const j = judge(details, truthOf(truths), tag);
          for (const l of lines) expect([tag, l.cache_check, l.loss_engine_tokens]).toEqual([tag, "ok", 0]);
          figures.push(`sweep, 3 replicas, ${route}, ${nameOf(v)}, cache ${share}x: ${j.widthPct.toFixed(1)} % of ${j.checked} requests`);
        }
      }
    }, 120_000);
  }

  test("a mock that drops every third hit: the engine's loss is exactly the hits it dropped", async () => {
    const { urls, truths } = await servers(3, { cacheTokens: 4 * WORKING_SET_TOKENS, faultForgetEvery: 3 });
    const out = join(dir, "forget.jsonl");
    const details = join(dir, "forget-details.jsonl");
    const r = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      urls.join(","),
      "--route",
      "round-robin",
      ...SWEEP,
      "--pcts",
      "90",
      "--working-set",
      "4",
      "--server-cache",
      statedOf(VARIANTS[0]!),
      "--output-file",
      out,
      "--request-details",
      details,
    ]);
    expect(r.code, r.stderr).toBe(0);
    await Bun.sleep(150);
    const truth = truthOf(truths);
    const dropped = readJsonl(details).reduce((a: number, d: any) => a + (truth.get(d.request_id)?.forgotten ?? 0), 0);
    const [line] = readJsonl(out);
    console.log(`forget every 3rd hit: loss_engine_tokens ${line.loss_engine_tokens}, dropped (truth) ${dropped}`);
    expect(dropped).toBeGreaterThan(0);
    expect(line.loss_engine_tokens).toBe(dropped);
    expect(line.cache_check).toBe("mismatch");
  }, 60_000);
});

/**
 * One multi-turn or replay run over `replicas` mocks in behaviour `v` (strict, the behaviour stated), every request's
 * truth judged against its range; the width goes to the figures.
 */
async function judgedRun(kind: "multiturn" | "replay", v: Variant, replicas: number, cacheTokens: number, command: string[]): Promise<void> {
  const { urls, truths } = await servers(replicas, { ...mockOf(v), cacheTokens });
  const tag = `${kind}-${nameOf(v)}-${replicas}`;
  const out = join(dir, `${tag}.jsonl`);
  const details = join(dir, `${tag}-details.jsonl`);
  const r = await runCli([
    ...command,
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    urls.join(","),
    ...(replicas > 1 ? ["--route", "round-robin"] : []),
    "--settle",
    "0",
    "--quiet",
    "--verify-cache",
    "strict",
    "--server-cache",
    statedOf(v),
    "--output-file",
    out,
    "--request-details",
    details,
  ]);
  expect([tag, r.code, r.code === 0 ? "" : r.stderr.slice(-600)]).toEqual([tag, 0, ""]);
  await Bun.sleep(150);
  const j = judge(readJsonl(details), truthOf(truths), tag);
  figures.push(`${kind}, ${replicas} server(s), ${nameOf(v)}: ${j.widthPct.toFixed(1)} % of ${j.checked} requests`);
}

describe("multi-turn and replay, every behaviour, under cache pressure", () => {
  const conversation = ["--num-clients", "4", "--num-rounds", "4", "--shared-system-tokens", "32", "--turn-tokens", "48", "--output-len", "8"];
  const traceOptions = {
    blockSize: 16,
    systems: 3,
    systemBlocks: 4,
    conversations: 10,
    turns: 4,
    maxTurnTokens: 48,
    turnGapMs: 40,
    startGapMs: 10,
    outputLength: 4,
    seed: 7,
  };
  for (const v of VARIANTS) {
    test(`multi-turn, ${nameOf(v)}`, async () => {
      for (const replicas of [1, 3]) await judgedRun("multiturn", v, replicas, 600, ["multiturn", ...conversation]);
    }, 60_000);

    test(`replay, ${nameOf(v)}`, async () => {
      const trace = join(dir, `trace-${nameOf(v)}.jsonl`);
      writeFileSync(trace, traceText(generateTrace(traceOptions)));
      for (const replicas of [1, 3]) await judgedRun("replay", v, replicas, 800, ["replay", trace, "--block-size", "16", "--time-scale", "0.2"]);
    }, 60_000);
  }
});
