/**
 * What the progress line costs: the same sweep against one mock with the live line on a real terminal (the client
 * runs under `script`, a pseudo-terminal), with the plain non-terminal lines, and with --quiet, alternating, several
 * times each. Compared: the client's JS-thread CPU and event-loop lag (its own self-check, from the JSONL) and its
 * mean ITL against the mock's fixed decode step (how far the measurement itself moved).
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { readResults } from "../../src/report/results-file.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt, mean, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const ITL_MS = 10;
type Mode = "terminal" | "plain" | "quiet";
const MODES: Mode[] = ["terminal", "plain", "quiet"];

interface Sample {
  jsCpuPct: number;
  lagP99Ms: number;
  itlErrorUs: number;
  progressBytes: number;
}

/** Single-quotes a word for `sh -c`. */
const shQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export async function runProgress(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const reps = ctx.quick ? 1 : 4;
  const streams = ctx.quick ? 16 : 64;
  const outputLen = ctx.quick ? 50 : 300;
  const dir = mkdtempSync(join(ctx.workDir, "progress-"));
  const mock = await startMock(ctx.bin, join(dir, "truth.jsonl"), [
    "--itl-ms",
    String(ITL_MS),
    "--ttft-base-ms",
    "20",
    "--prefill-us-per-token",
    "0",
    "--max-running",
    String(streams + 8),
  ]);
  const samples: Record<Mode, Sample[]> = { terminal: [], plain: [], quiet: [] };
  let runs = 0;
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const mode of MODES) {
        const out = join(dir, `${mode}-${rep}.jsonl`);
        const args = [
          ctx.bin,
          "run",
          "--model",
          ctx.tokenizers.llama2,
          "--base-url",
          mock.url,
          "--num-prompts",
          String(streams),
          "--max-concurrency",
          String(streams),
          "--total-tokens",
          "256",
          "--output-len",
          String(outputLen),
          "--pcts",
          "0",
          "--settle",
          "0",
          "--output-file",
          out,
          ...(mode === "quiet" ? ["--quiet"] : []),
        ];
        const env = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(streams + 64), NO_COLOR: "1" };
        // `script` gives the client a pseudo-terminal for stderr; its output (the terminal's bytes) comes back on stdout.
        const cmd = mode === "terminal" ? ["script", "-qec", args.map(shQuote).join(" "), "/dev/null"] : args;
        const r = await runBounded(cmd, { env, timeoutMs: 120_000 });
        runs++;
        const line = readResults(readIfExists(out), out).at(-1)?.pcts.at(-1);
        if (r.code !== 0 || !line) {
          progress(`progress: ${mode} run ${rep + 1} failed (exit ${r.code})`);
          continue;
        }
        const progressBytes = ((mode === "terminal" ? r.stdoutTail : r.stderrTail).match(/requests, [\d.]+ req\/s[^\r\n]*/g) ?? []).length;
        samples[mode].push({
          jsCpuPct: line.client_js_cpu_pct ?? NaN,
          lagP99Ms: line.client_loop_lag_p99_ms ?? NaN,
          itlErrorUs: ((line.mean_itl_ms ?? NaN) - ITL_MS) * 1000,
          progressBytes,
        });
        progress(
          `progress: ${mode} run ${rep + 1}/${reps}: JS CPU ${fmt(line.client_js_cpu_pct, 1)} %, lag p99 ${fmt(line.client_loop_lag_p99_ms, 2)} ms, mean ITL ${fmt(line.mean_itl_ms, 3)} ms`,
        );
      }
    }
  } finally {
    await mock.stop();
  }
  const median = (xs: number[]) => percentile(xs, 50);
  const rows = MODES.map((mode) => {
    const s = samples[mode];
    return [
      mode,
      String(s.length),
      fmt(median(s.map((x) => x.jsCpuPct)), 1),
      fmt(median(s.map((x) => x.lagP99Ms)), 2),
      fmt(median(s.map((x) => x.itlErrorUs)), 0),
      fmt(mean(s.map((x) => x.progressBytes)), 0),
    ];
  });
  const cpu = (m: Mode) => median(samples[m].map((x) => x.jsCpuPct));
  const spreadQuiet = samples.quiet.map((x) => x.jsCpuPct);
  const noise = spreadQuiet.length > 1 ? Math.max(...spreadQuiet) - Math.min(...spreadQuiet) : NaN;
  const diff = cpu("terminal") - cpu("quiet");
  return {
    name: "progress",
    title: `Progress display cost: ${streams} streams x ${outputLen} tokens at ${ITL_MS} ms per token, terminal vs plain vs --quiet (median of ${reps})`,
    columns: ["mode", "runs", "JS thread CPU %", "event-loop lag p99 ms", "mean ITL - mock ITL µs", "progress lines seen"],
    rows,
    targets: [
      {
        target: "the live progress line costs the hot path nothing measurable",
        measured: `JS CPU terminal - quiet = ${fmt(diff, 1)} points (spread of --quiet runs alone: ${fmt(noise, 1)})`,
        pass: ctx.quick || !Number.isFinite(diff) ? null : diff <= Math.max(noise, 1),
      },
    ],
    notes: [
      "terminal: the client runs under `script -qec` (a pseudo-terminal on stderr), so the line is redrawn every 500 ms; plain: stderr is a pipe (a line every 10 s); quiet: --quiet.",
      "Figures are the client's own self-check of the pct (client_js_cpu_pct, client_loop_lag_p99_ms) and its mean ITL minus the mock's fixed step.",
      `Runs: ${runs}; modes alternate within each repetition so drift on the shared box hits all three alike.`,
    ],
    trials: [],
    figures: { jsCpuTerminal: cpu("terminal"), jsCpuQuiet: cpu("quiet"), jsCpuPlain: cpu("plain"), quietSpread: noise },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
