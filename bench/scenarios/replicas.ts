/**
 * What routed replicas cost the client. The ledger: hitLedger in this process on a synthetic line of 10k requests
 * over three replicas (prompts of 16 pages, 64 prefix groups, replica capacities that evict), its time per request
 * and the heap it grows, the median of 5 runs. The routing: the binary against three mock processes, one line of
 * requests sent directly to one of them, then the same line routed by each client policy, side by side in one run:
 * wall time and the client's own CPU per request.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { hitLedger } from "../../src/metrics/hit-ledger.ts";
import { expectPoint } from "../../src/metrics/point-expectations.ts";
import type { CacheSequence } from "../../src/metrics/cache-model.ts";
import { UNKNOWN_BEHAVIOUR } from "../../src/config/cache-behaviour.ts";
import type { RequestRecord } from "../../src/schema/record.ts";
import { parseJsonlLine } from "../../src/report/jsonl.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const POLICIES = ["round-robin", "random", "least-in-flight", "session", "prefix", "oracle"] as const;

function ledgerCost(n: number, runs: number): { usPerRequest: number; modelUsPerRequest: number; heapMiB: number } {
  const page = 16;
  const prompts: CacheSequence[] = [];
  const records: RequestRecord[] = [];
  for (let i = 0; i < n; i++) {
    const group = i % 64;
    prompts.push({
      length: 16 * page,
      hashIds: Array.from({ length: 16 }, (_, k) => (k < 12 ? 1 + group * 100 + k : 1e7 + i * 100 + k)),
    });
    const start = i * 2;
    records.push({
      index: i,
      ok: true,
      startMs: start,
      firstTokenMs: start + 5,
      lastEventMs: start + 12,
      latencyMs: 12,
      ttftMs: 5,
      outputLen: 8,
      cachedTokens: 192,
    } as RequestRecord);
  }
  const input = {
    sequenceOf: (i: number) => prompts[i],
    records,
    replicaOf: (i: number) => i % 3,
    homeKeyOf: (i: number) => i % 64,
    replicas: [0, 1, 2].map((r) => ({ url: `http://r${r}`, capacityTokens: 64 * 16 * page, warmed: [] })),
    pageSize: page,
    behaviour: UNKNOWN_BEHAVIOUR,
  };
  hitLedger(input);
  const times: number[] = [];
  let heap = 0;
  for (let k = 0; k < runs; k++) {
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    const t = performance.now();
    const l = hitLedger(input);
    times.push(performance.now() - t);
    heap = Math.max(heap, process.memoryUsage().heapUsed - before);
    if (l.counted !== n) throw new Error("ledger: not every request counted");
  }
  times.sort((a, b) => a - b);
  // The cache model alone, once over the line (what every line's cache check costs; the ledger runs it three ways).
  const model = {
    sequenceOf: input.sequenceOf,
    records,
    serverOf: input.replicaOf,
    servers: input.replicas.map((r) => ({ capacityTokens: r.capacityTokens, prior: r.warmed })),
    pageSize: page,
    blockSize: page,
    behaviour: UNKNOWN_BEHAVIOUR,
  };
  expectPoint(model);
  const modelTimes: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    expectPoint(model);
    modelTimes.push(performance.now() - t);
  }
  modelTimes.sort((a, b) => a - b);
  return {
    usPerRequest: (times[Math.floor(runs / 2)]! * 1000) / n,
    modelUsPerRequest: (modelTimes[Math.floor(runs / 2)]! * 1000) / n,
    heapMiB: heap / 2 ** 20,
  };
}

export async function runReplicasScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const n = ctx.quick ? 2000 : 10_000;
  const ledger = ledgerCost(n, ctx.quick ? 3 : 5);
  progress(
    `replicas: ledger of ${n} requests: ${fmt(ledger.usPerRequest, 2)} µs a request (the model alone ${fmt(ledger.modelUsPerRequest, 2)} µs), heap +${fmt(ledger.heapMiB, 1)} MiB`,
  );
  const dir = mkdtempSync(join(ctx.workDir, "replicas-"));
  const mocks = await Promise.all(
    [0, 1, 2].map((i) => startMock(ctx.bin, join(dir, `truth-${i}.jsonl`), ["--itl-ms", "0", "--ttft-base-ms", "1", "--page-size", "16"])),
  );
  const lines = ctx.quick ? 500 : 2000;
  const rows: string[][] = [];
  const perRequest: Record<string, number> = {};
  try {
    for (const route of ["direct", ...POLICIES]) {
      const out = join(dir, `${route}.jsonl`);
      const urls = route === "direct" ? [mocks[0]!.url] : mocks.map((m) => m.url);
      const started = performance.now();
      const r = await runBounded(
        [
          ctx.bin,
          "run",
          "--model",
          ctx.tokenizers.llama2,
          "--base-url",
          urls.join(","),
          ...(route === "direct" ? [] : ["--route", route]),
          "--num-prompts",
          String(lines),
          "--total-tokens",
          "256",
          "--output-len",
          "4",
          "--pcts",
          "75",
          "--working-set",
          "16",
          "--max-concurrency",
          "32",
          "--settle",
          "0",
          "--quiet",
          "--output-file",
          out,
        ],
        { timeoutMs: 300_000 },
      );
      const wallS = (performance.now() - started) / 1000;
      const line = readIfExists(out)
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => parseJsonlLine(l))[0];
      const cpuMsPerRequest = line === undefined ? NaN : ((line.client_cpu_pct / 100) * line.benchmark_duration * 1000) / lines;
      perRequest[route] = cpuMsPerRequest;
      rows.push([
        route,
        String(r.code),
        fmt(wallS, 2),
        fmt(line?.benchmark_duration ?? NaN, 2),
        fmt(cpuMsPerRequest * 1000, 1),
        fmt(line?.routing_imbalance ?? null, 2),
        line?.loss_eviction_ratio === undefined ? "-" : `${fmt(line.loss_eviction_ratio * 100, 2)} %`,
      ]);
      progress(`replicas: ${route}: exit ${r.code}, ${fmt(wallS, 2)} s`);
    }
  } finally {
    await Promise.all(mocks.map((m) => m.stop()));
  }
  const worst = Math.max(...POLICIES.map((p) => perRequest[p] ?? NaN)) / (perRequest.direct ?? NaN);
  const targets: TargetCheck[] = [
    {
      target: `the cache model costs under 50 µs of client CPU a request at ${n} requests over three replicas`,
      measured: `${fmt(ledger.modelUsPerRequest, 2)} µs`,
      pass: ledger.modelUsPerRequest < 50,
    },
    {
      target: `the ledger (the model three ways: actual, at home, one infinite cache) costs under 50 µs of client CPU a request at ${n} requests`,
      measured: `${fmt(ledger.usPerRequest, 2)} µs, heap +${fmt(ledger.heapMiB, 1)} MiB`,
      pass: ledger.usPerRequest < 50,
    },
    {
      target: "routing costs the client under 1.5x the CPU a request of sending directly (the worst policy)",
      measured: Number.isFinite(worst) ? `${fmt(worst, 2)}x` : "n/a",
      pass: ctx.quick ? null : worst < 1.5,
    },
  ];
  return {
    name: "replicas",
    title: `Routed replicas: the ledger of ${n} requests in this process; ${lines} requests sent directly or routed over three mocks`,
    columns: ["route", "exit", "wall s", "measured s", "client CPU µs a request", "imbalance", "lost to eviction"],
    rows,
    targets,
    notes: [
      "The client CPU a request is the line's client_cpu_pct over its measured window, so it includes the flushes' and warms' absence but every request's own work; the ledger is computed after the window, off every clock.",
      "Direct: one mock alone (no replicas, no ledger); the others route over three, each prefix warmed where the policy first sends it.",
    ],
    trials: [],
    figures: {
      ledgerUsPerRequest: ledger.usPerRequest,
      modelUsPerRequest: ledger.modelUsPerRequest,
      ledgerHeapMiB: ledger.heapMiB,
      worstRoutingCpuRatio: worst,
    },
    details: { rows },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
