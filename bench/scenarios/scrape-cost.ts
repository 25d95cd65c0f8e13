/**
 * Scrape cost: the telemetry study scrapes every server's /metrics on its own timer during each point (issue 39). The
 * same line with `--scrape-interval 0` (off) and `250ms` (the shortest), trials interleaved so the box's load drifts
 * over both alike: the client's CPU per streamed event must not move beyond the spread of the trials without it.
 */
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import { runTrial, type BenchContext, type TrialResult } from "../lib/trial.ts";

const ITL_MS = 20;
const median = (xs: number[]) => (xs.length > 0 ? percentile(xs, 50) : NaN);

export async function runScrapeCost(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const streams = ctx.quick ? 64 : 256;
  const outputLen = ctx.quick ? 25 : 100;
  const pairs = ctx.quick ? 1 : 5;
  const arms = [
    { name: "off", args: ["--scrape-interval", "0"] },
    { name: "250ms", args: ["--scrape-interval", "250ms"] },
  ];
  const trials: Array<{ name: string; r: TrialResult }> = [];
  for (let p = 0; p < pairs; p++) {
    for (const arm of arms) {
      progress(`scrape-cost: --scrape-interval ${arm.args[1]}, ${streams} streams x ${outputLen} events, pair ${p + 1}/${pairs}`);
      const r = await runTrial(ctx, {
        tool: "warmbench",
        streams,
        itlMs: ITL_MS,
        outputLen,
        totalTokens: 64,
        pct: 0,
        tokenizer: ctx.tokenizers.llama2,
        timeoutMs: 120_000,
        extraArgs: arm.args,
      });
      trials.push({ name: arm.name, r });
    }
  }
  const cpu = (name: string) => trials.filter((t) => t.name === name && t.r.note === "").map((t) => t.r.clientCpuUsPerEvent);
  const off = cpu("off");
  const on = cpu("250ms");
  // Within the spread of the trials without scraping (or 5 % of their median, whichever is wider): not measurable.
  const slack = Math.max(Math.max(...off) - Math.min(...off), 0.05 * median(off));
  const target: TargetCheck = {
    target: "scraping at 250 ms: nothing measurable on the hot path (median client CPU µs/event with it <= without + the spread)",
    measured: `without ${fmt(median(off), 1)}, with ${fmt(median(on), 1)} µs/event (medians of ${off.length} and ${on.length}; spread ${fmt(slack, 1)})`,
    pass: ctx.quick || off.length === 0 || on.length === 0 ? null : median(on) <= median(off) + slack,
  };
  return {
    name: "scrape-cost",
    title: `Scrape cost: client CPU per event without and with --scrape-interval 250ms (${streams} streams, mock itl ${ITL_MS} ms)`,
    columns: ["--scrape-interval", "streams", "events", "CPU µs/event", "CPU s", "wall s", "note"],
    rows: trials.map(({ name, r }) => [
      name,
      String(r.spec.streams),
      String(r.truth.events),
      fmt(r.clientCpuUsPerEvent, 1),
      fmt(r.client.cpuMs / 1000, 2),
      fmt(r.client.wallMs / 1000, 1),
      r.note,
    ]),
    targets: [target],
    notes: [
      `${pairs} pair(s) of trials, interleaved; CPU per event is the client's whole-process CPU over the streamed events the mock logged.`,
      "The mock serves SGLang's /metrics families; each scrape is one GET off the request path, on the study's own timer.",
    ],
    trials: trials.map((t) => t.r),
    figures: { "median CPU µs/event off": median(off), "median CPU µs/event 250ms": median(on) },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
