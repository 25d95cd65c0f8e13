/**
 * Startup: wall time from spawn to exit of commands that send nothing (`--version`, `--help`, `run --help`,
 * `schema`), for the measured binary and, with `--baseline`, a second one ("before"), trials interleaved so that the
 * box's load drifts over both alike. Issue 26 asked that a command's file be loaded only when it runs; this is the
 * figure that says what that bought.
 */
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const COMMANDS: ReadonlyArray<{ label: string; args: string[] }> = [
  { label: "--version", args: ["--version"] },
  { label: "--help", args: ["--help"] },
  { label: "run --help", args: ["run", "--help"] },
  { label: "schema", args: ["schema"] },
];

function timeOnce(bin: string, args: string[]): number {
  const t0 = performance.now();
  const r = Bun.spawnSync([bin, ...args], { stdout: "ignore", stderr: "ignore", env: { ...process.env, NO_COLOR: "1" } });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`startup: ${bin} ${args.join(" ")} exited ${r.exitCode}`);
  return ms;
}

export async function runStartup(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const reps = ctx.quick ? 5 : 30;
  const bins = [...(ctx.baseline ? [{ name: "before", bin: ctx.baseline }] : []), { name: "after", bin: ctx.bin }];
  const times = new Map<string, number[]>();
  for (const c of COMMANDS) for (const b of bins) timeOnce(b.bin, c.args); // page cache warm for both
  for (let rep = 0; rep < reps; rep++) {
    for (const c of COMMANDS) {
      for (const b of bins) {
        const key = `${b.name}\u0000${c.label}`;
        times.set(key, [...(times.get(key) ?? []), timeOnce(b.bin, c.args)]);
      }
    }
  }
  const rows: string[][] = [];
  const figures: Record<string, number | null> = {};
  for (const c of COMMANDS) {
    for (const b of bins) {
      const t = times.get(`${b.name}\u0000${c.label}`) ?? [];
      const median = percentile(t, 50);
      figures[`${b.name} ${c.label} median ms`] = median;
      rows.push([c.label, b.name, fmt(median, 1), fmt(percentile(t, 90), 1), fmt(Math.min(...t), 1)]);
    }
    progress(`startup: ${c.label}: ${bins.map((b) => `${b.name} ${fmt(figures[`${b.name} ${c.label} median ms`] ?? NaN, 1)} ms`).join(", ")}`);
  }
  const helpAfter = figures["after --help median ms"] ?? NaN;
  return {
    name: "startup",
    title: "Startup: spawn to exit of commands that send nothing (median of the runs, ms)",
    columns: ["command", "binary", "median ms", "p90 ms", "min ms"],
    rows,
    targets: [
      {
        target: "--help <= 100 ms",
        measured: `${fmt(helpAfter, 1)} ms (median of ${reps})`,
        pass: ctx.quick || !Number.isFinite(helpAfter) ? null : helpAfter <= 100,
      },
    ],
    notes: [
      `${reps} runs of each command per binary, interleaved; before = the binary given as --baseline (${ctx.baseline ?? "none"}), after = the one measured (${ctx.bin}).`,
      "Wall time from Bun.spawnSync to the exit, stdout and stderr discarded; the first run of each is left out (page cache).",
    ],
    trials: [],
    figures,
    details: Object.fromEntries([...times].map(([k, v]) => [k.replace("\u0000", " "), v])),
    elapsedS: (performance.now() - t0) / 1000,
  };
}
