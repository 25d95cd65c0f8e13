/**
 * 4096 streams against one mock, twice in a row (issue 37): every stream connects at once, so the mock's listen
 * backlog must hold 4096 connections (Bun's own is 512; src/mock/listen-backlog.ts raises it). Per run: the failed
 * requests (the JSONL's `failed`), the connect failures and the requests the mock never logged (details joined with
 * its truth on request_id), and the requests whose connection waited for a SYN retry (the mock's receipt 1 s or
 * more after the client's send: the kernel dropped the first SYN). The kernel's ListenOverflows / ListenDrops
 * (/proc/net/netstat, machine-wide) are shown beside them.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readResults } from "../../src/report/results-file.ts";
import { parseDetails, parseTruth } from "../lib/join.ts";
import { readIfExists, runBounded, startMock } from "../lib/procs.ts";
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import type { BenchContext } from "../lib/trial.ts";

const ITL_MS = 20;
/** A dropped SYN is sent again after 1 s (TCP_TIMEOUT_INIT): a send delay this long is a retried connection. */
const SYN_RETRY_MS = 1000;

interface RunFigures {
  completed: number;
  failed: number;
  connectErrors: number;
  unlogged: number;
  synRetried: number;
  sendDelayP99Ms: number;
  sendDelayMaxMs: number;
  listenOverflows: number;
  note: string;
}

/** TcpExt ListenOverflows + ListenDrops from /proc/net/netstat (all processes); NaN where unreadable. */
function listenCounters(): { overflows: number; drops: number } {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
    const header = lines.findIndex((l) => l.startsWith("TcpExt:"));
    const names = lines[header]!.split(/\s+/);
    const values = lines[header + 1]!.split(/\s+/).map(Number);
    return { overflows: values[names.indexOf("ListenOverflows")] ?? NaN, drops: values[names.indexOf("ListenDrops")] ?? NaN };
  } catch {
    return { overflows: NaN, drops: NaN };
  }
}

const lost = (f: RunFigures): number => f.failed + f.connectErrors + f.unlogged + f.synRetried;

export async function runMockBacklog(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const streams = ctx.quick ? 256 : 4096;
  const outputLen = 20;
  const dir = mkdtempSync(join(ctx.workDir, "mock-backlog-"));
  const truthPath = join(dir, "truth.jsonl");
  const mock = await startMock(ctx.bin, truthPath, [
    "--itl-ms",
    String(ITL_MS),
    "--ttft-base-ms",
    "20",
    "--prefill-us-per-token",
    "0",
    "--max-running",
    String(streams + 8),
    "--incremental",
  ]);
  const runs: Array<{ detailsPath: string; out: string; code: number | null; timedOut: boolean; wallMs: number; overflows: number; drops: number }> = [];
  let maxInFlight = NaN;
  try {
    for (let run = 1; run <= 2; run++) {
      progress(`mock-backlog: run ${run}/2, ${streams} streams at once against one mock`);
      const detailsPath = join(dir, `details-${run}.jsonl`);
      const out = join(dir, `results-${run}.jsonl`);
      const before = listenCounters();
      const r = await runBounded(
        [
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
          "64",
          "--output-len",
          String(outputLen),
          "--pcts",
          "0",
          "--settle",
          "0",
          "--request-details",
          detailsPath,
          "--output-file",
          out,
        ],
        { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: String(streams + 64), NO_COLOR: "1" }, timeoutMs: 120_000 },
      );
      const after = listenCounters();
      runs.push({
        detailsPath,
        out,
        code: r.code,
        timedOut: r.timedOut,
        wallMs: r.wallMs,
        overflows: after.overflows - before.overflows,
        drops: after.drops - before.drops,
      });
    }
    maxInFlight = (await mock.stats()).maxInFlight;
  } finally {
    await mock.stop();
  }
  const truth = new Map(parseTruth(readIfExists(truthPath), truthPath).map((t) => [t.requestId, t]));
  const figures: RunFigures[] = runs.map((run) => {
    const details = parseDetails(readIfExists(run.detailsPath), run.detailsPath);
    const line = readResults(readIfExists(run.out), run.out).at(-1)?.pcts.at(-1) as Record<string, unknown> | undefined;
    const sendDelays: number[] = [];
    let unlogged = 0;
    for (const d of details) {
      const t = truth.get(d.requestId);
      if (t === undefined) unlogged++;
      else sendDelays.push(t.receivedMs - d.startEpochMs);
    }
    const notes: string[] = [];
    if (run.timedOut) notes.push("client killed at its time limit");
    else if (run.code !== 0) notes.push(`client exit ${run.code}`);
    if (details.length !== streams) notes.push(`${details.length} of ${streams} details lines`);
    if (!line) notes.push("no pct line");
    return {
      completed: typeof line?.completed === "number" ? line.completed : 0,
      failed: typeof line?.failed === "number" ? line.failed : streams,
      connectErrors: details.filter((d) => d.failureKind === "connect").length,
      unlogged: unlogged + Math.max(0, streams - details.length),
      synRetried: sendDelays.filter((ms) => ms >= SYN_RETRY_MS).length,
      sendDelayP99Ms: percentile(sendDelays, 99),
      sendDelayMaxMs: sendDelays.reduce((m, v) => Math.max(m, v), Number.NEGATIVE_INFINITY),
      listenOverflows: run.overflows + run.drops,
      note: notes.join("; "),
    };
  });
  const rows = figures.map((f, i) => [
    String(i + 1),
    String(streams),
    String(f.completed),
    String(f.failed),
    String(f.connectErrors),
    String(f.unlogged),
    String(f.synRetried),
    `${fmt(f.sendDelayP99Ms, 1)} / ${fmt(f.sendDelayMaxMs, 1)}`,
    Number.isFinite(f.listenOverflows) ? String(f.listenOverflows) : "n/a",
    fmt(runs[i]!.wallMs / 1000, 1),
    f.note,
  ]);
  const clean = figures.length === 2 && figures.every((f) => lost(f) === 0 && f.completed === streams && f.note === "");
  return {
    name: "mock-backlog",
    title: `${streams} streams at once against one mock, twice in a row (mock itl ${ITL_MS} ms, ${outputLen} events each)`,
    columns: [
      "run",
      "streams",
      "completed",
      "failed",
      "connect errors",
      "not logged by the mock",
      "SYN retried (send delay >= 1 s)",
      "send delay p99 / max ms",
      "kernel listen overflows + drops",
      "wall s",
      "note",
    ],
    rows,
    targets: [
      {
        target: `4096 streams against one mock twice in a row, 0 lost in each (failed, connect errors, unlogged, SYN-retried)${ctx.quick ? " (quick: 256)" : ""}`,
        measured: figures.map((f, i) => `run ${i + 1}: ${lost(f)} lost, ${f.completed}/${streams} completed`).join("; "),
        pass: ctx.quick ? null : clean,
      },
    ],
    notes: [
      "Every stream connects at once (num-prompts = max-concurrency = streams), so the listener's accept queue must hold them all: Bun listens with 512; the mock raises it to 4096 (capped by net.core.somaxconn) with listen() on the listening socket.",
      "failed: the client's JSONL; connect errors: details lines with failure_kind connect; not logged: details lines without a truth line of the same request_id (plus missing details lines); SYN retried: requests the mock received 1 s or more after the client's send, the kernel's retry of a dropped SYN.",
      "kernel listen overflows + drops: TcpExt ListenOverflows + ListenDrops from /proc/net/netstat over the client run, machine-wide (other processes' listeners count too).",
      `The mock's max in flight over both runs: ${Number.isFinite(maxInFlight) ? maxInFlight : "n/a"}.`,
    ],
    trials: [],
    figures: {
      lostRun1: figures[0] ? lost(figures[0]) : null,
      lostRun2: figures[1] ? lost(figures[1]) : null,
      maxInFlight: Number.isFinite(maxInFlight) ? maxInFlight : null,
    },
    details: { runs: figures },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
