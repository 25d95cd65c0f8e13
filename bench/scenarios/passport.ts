/**
 * How long a passport takes and how exact it is: `warmbench passport` against mocks of known geometry (page sizes
 * 1, 16 and 64; capacities from 3000 to 100000 tokens; with and without a host tier; answers cached or not; a prompt
 * cached at its prefill's end or only at its finish).
 * Measured per mock: each figure against the truth, the requests sent and the wall time.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

interface Case {
  name: string;
  page: number;
  capacity: number;
  host: number;
  outputs: boolean;
  insertAt: "prefill" | "finish";
}

const CASES: Case[] = [
  { name: "page 1, 3000 tokens", page: 1, capacity: 3000, host: 0, outputs: true, insertAt: "prefill" },
  { name: "page 16, 20000 tokens", page: 16, capacity: 20000, host: 0, outputs: true, insertAt: "prefill" },
  { name: "page 64, 100000 tokens, answers not cached", page: 64, capacity: 100000, host: 0, outputs: false, insertAt: "prefill" },
  { name: "page 16, 8000 tokens, host tier 16000", page: 16, capacity: 8000, host: 16000, outputs: true, insertAt: "prefill" },
  { name: "page 16, 20000 tokens, prompts cached at finish", page: 16, capacity: 20000, host: 0, outputs: true, insertAt: "finish" },
];

export async function runPassportScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(ctx.workDir, "passport-"));
  const rows: string[][] = [];
  const within: boolean[] = [];
  for (const c of ctx.quick ? CASES.slice(0, 2) : CASES) {
    const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), [
      "--page-size",
      String(c.page),
      "--cache-tokens",
      String(c.capacity),
      "--host-cache-tokens",
      String(c.host),
      "--itl-ms",
      "1",
      "--ttft-base-ms",
      "2",
      "--prefill-us-per-token",
      "5",
      ...(c.outputs ? [] : ["--no-output-cache"]),
      "--insert-at",
      c.insertAt,
    ]);
    const file = join(dir, `${rows.length}.json`);
    try {
      const started = performance.now();
      const r = await runBounded([ctx.bin, "passport", "--model", ctx.tokenizers.llama2, "--base-url", mock.url, "--quiet", "--output-file", file], {
        timeoutMs: 300_000,
      });
      const wallS = (performance.now() - started) / 1000;
      const p = r.code === 0 ? JSON.parse(readFileSync(file, "utf8")) : null;
      const capacity = p?.capacity_tokens.value ?? null;
      const ok =
        p !== null &&
        p.page_size_tokens.value === c.page &&
        capacity !== null &&
        capacity <= c.capacity &&
        capacity > c.capacity - c.page - 1 &&
        p.outputs_cached.value === c.outputs &&
        p.insert_at?.value === c.insertAt &&
        p.second_tier.value?.present === c.host > 0;
      within.push(ok);
      rows.push([
        c.name,
        String(p?.page_size_tokens.value ?? "n/a"),
        fmt(capacity, 0),
        capacity === null ? "n/a" : `${fmt(((capacity - c.capacity) / c.capacity) * 100, 2)} %`,
        String(p?.outputs_cached.value ?? "n/a"),
        String(p?.insert_at?.value ?? "n/a"),
        String(p?.eviction.value ?? "n/a"),
        String(p?.second_tier.value?.present ?? "n/a"),
        fmt(p?.second_tier.value?.total_capacity_tokens ?? null, 0),
        String(p?.requests_sent ?? "n/a"),
        fmt(wallS, 2),
      ]);
      progress(`passport: ${c.name}: exit ${r.code}, ${fmt(wallS, 2)} s`);
    } finally {
      await mock.stop();
    }
  }
  const targets: TargetCheck[] = [
    {
      target:
        "every figure recovered: the page size exactly, the capacity within one page, answers cached or not, a prompt cached at prefill or at finish, the host tier present or not",
      measured: `${within.filter(Boolean).length} of ${within.length} mocks`,
      pass: within.every(Boolean),
    },
  ];
  return {
    name: "passport",
    title: "warmbench passport against mocks of known geometry (each figure against the truth; requests and wall time per passport)",
    columns: [
      "mock",
      "page (tokens)",
      "capacity (tokens)",
      "capacity vs truth",
      "answers cached",
      "prompt cached at",
      "eviction",
      "second tier",
      "both tiers (tokens)",
      "requests",
      "wall s",
    ],
    rows,
    targets,
    notes: [
      "The mock holds whole pages: a capacity that is no multiple of the page is held floored to one, which the passport reports (within one page below the flag).",
      "Both tiers' capacity is what the mock's tiers hold together, its host tier keeping copies of pages the device still has; the passport measures it by behaviour.",
      "Wall time is the mock's prefill and the client's requests on this machine: a GPU server's prefill of the same tokens sets it there (the capacity search sends about capacity x log2(capacity / page) tokens).",
    ],
    trials: [],
    figures: {},
    details: { rows },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
