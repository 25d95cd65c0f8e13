/**
 * How fast and how close `warmbench capacity` finds a known capacity: mocks with M slots and a fixed service time S
 * (so with evenly spaced arrivals the capacity is C = M / S, and at the gate's slack of 100 ms over a request's own
 * TTFT it lies between C and the SLO truth 1 / (1/C - 0.1/N) for N requests a probe), each searched from a start 2x
 * above C. Measured per capacity: what the search found, its bracket, the probes it sent and its wall time.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { parseJsonlLine } from "../../src/report/jsonl.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const BASE_MS = 100;
const ITL_MS = 10;
const PREFILL_US = 50;
const TOTAL = 2000;
const OUT = 30;
const PCT = 90;
const SLACK_S = 0.1;
const PRECISION = 0.05;
/** A request's own TTFT (its prefix warmed) and its service time, s. */
const ALONE_MS = BASE_MS + (PREFILL_US * (TOTAL - Math.floor((TOTAL * PCT) / 100))) / 1000;
const SERVICE_S = (ALONE_MS + (OUT - 1) * ITL_MS) / 1000;

interface Search {
  slots: number;
  truth: number;
  sloTruth: number;
  found: number | null;
  bracket: [number | null, number | null] | null;
  probes: number;
  wallS: number;
  status: string;
}

export async function runCapacitySearch(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const slotsList = ctx.quick ? [4] : [4, 8, 16];
  const n = ctx.quick ? 24 : 40;
  const dir = mkdtempSync(join(ctx.workDir, "capacity-search-"));
  const searches: Search[] = [];
  for (const slots of slotsList) {
    const truth = slots / SERVICE_S;
    const sloTruth = 1 / (1 / truth - SLACK_S / n);
    const mock = await startMock(ctx.bin, join(dir, `truth-${slots}.jsonl`), [
      "--max-running",
      String(slots),
      "--ttft-base-ms",
      String(BASE_MS),
      "--itl-ms",
      String(ITL_MS),
      "--prefill-us-per-token",
      String(PREFILL_US),
    ]);
    const out = join(dir, `search-${slots}.jsonl`);
    try {
      const r = await runBounded(
        [
          ctx.bin,
          "capacity",
          "--model",
          ctx.tokenizers.llama2,
          "--base-url",
          mock.url,
          "--total-tokens",
          String(TOTAL),
          "--output-len",
          String(OUT),
          "--pcts",
          String(PCT),
          "--num-prompts",
          String(n),
          "--burstiness",
          "inf",
          "--settle",
          "0",
          "--quiet",
          "--start",
          String(Number((2 * truth).toPrecision(3))),
          "--precision",
          `${PRECISION * 100}%`,
          "--output-file",
          out,
          "--gate",
          `ttft_from_intended_p99_ms<=${ALONE_MS + SLACK_S * 1000}`,
        ],
        { timeoutMs: 300_000 },
      );
      const line = readIfExists(out)
        .split("\n")
        .filter((l) => l.includes('"capacity"'))
        .map((l) => parseJsonlLine(l))
        .find((l) => l.type === "capacity");
      if (r.code !== 0 || line === undefined) progress(`capacity-search: ${slots} slots: exit ${r.code}, no capacity line`);
      searches.push({
        slots,
        truth,
        sloTruth,
        found: line?.capacity_request_rate ?? null,
        bracket: line?.capacity_bracket ?? null,
        probes: line?.probes_sent ?? 0,
        wallS: line?.search_wall_s ?? NaN,
        status: line?.capacity_status ?? `exit ${r.code}`,
      });
      progress(
        `capacity-search: ${slots} slots: found ${fmt(line?.capacity_request_rate, 2)} req/s (C ${fmt(truth, 2)}) in ${line?.probes_sent} probes, ${fmt(line?.search_wall_s, 1)} s`,
      );
    } finally {
      await mock.stop();
    }
  }
  const within = (s: Search) => s.found !== null && s.found >= s.truth * (1 - PRECISION) && s.found <= s.sloTruth * (1 + PRECISION);
  const targets: TargetCheck[] = [
    {
      target: `each search lands within its precision (${PRECISION * 100} %) of the truth, between C = M / S and the SLO truth`,
      measured: searches.map((s) => `${s.slots} slots: ${fmt(s.found, 2)} in [${fmt(s.truth, 2)}, ${fmt(s.sloTruth, 2)}]`).join("; "),
      pass: ctx.quick ? null : searches.every(within),
    },
    {
      target: "at most 8 probes from a start 2x off (no --confirm)",
      measured: `probes: ${searches.map((s) => s.probes).join(", ")}`,
      pass: ctx.quick ? null : searches.every((s) => s.probes <= 8),
    },
  ];
  return {
    name: "capacity-search",
    title: `Capacity search against the mock's known capacity (${PCT} % shared prefix, service time ${fmt(SERVICE_S * 1000, 0)} ms, ${n} requests a probe, evenly spaced, start 2x above C)`,
    columns: ["slots M", "truth C = M/S (req/s)", "SLO truth (req/s)", "found (req/s)", "found / C", "bracket", "status", "probes", "wall s"],
    rows: searches.map((s) => [
      String(s.slots),
      fmt(s.truth, 2),
      fmt(s.sloTruth, 2),
      fmt(s.found, 2),
      s.found === null ? "n/a" : fmt(s.found / s.truth, 3),
      s.bracket === null ? "n/a" : `${fmt(s.bracket[0], 2)} – ${fmt(s.bracket[1], 2)}`,
      s.status,
      String(s.probes),
      fmt(s.wallS, 1),
    ]),
    targets,
    notes: [
      `Gate: ttft_from_intended_p99_ms <= ${ALONE_MS + SLACK_S * 1000} (a request's own TTFT ${ALONE_MS} ms plus ${SLACK_S * 1000} ms of waiting): above C the queue grows by 1/C - 1/r a request, so N requests accumulate ${SLACK_S * 1000} ms once r exceeds the SLO truth.`,
      "Every probe is a controlled measurement: its own flush and proof, warm, then its requests; probes and wall time include them all (the tokenizer and the server checks once per search).",
    ],
    trials: [],
    figures: Object.fromEntries(
      searches.flatMap((s) => [
        [`found${s.slots}`, s.found],
        [`probes${s.slots}`, s.probes],
        [`wallS${s.slots}`, s.wallS],
      ]),
    ),
    details: { searches },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
