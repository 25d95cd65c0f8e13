/**
 * Client CPU per event and peak RSS with long prompts: 4096 streams of 70k-token prompts at pct 99 (so the
 * shared prefix is serialized once and the prompts fit in memory), 20 output tokens each. CPU comes from the
 * client's /proc/<pid>/stat over the measured window and from wait4's rusage over its whole life; peak RSS
 * from VmHWM (/proc/<pid>/status) and rusage maxrss.
 */
import { progress, type ScenarioResult } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import { runTrial, textModeOf, type BenchContext, type TextMode, type Tool, type TrialResult } from "../lib/trial.ts";

const GIB_MIB = 1024;

function row(r: TrialResult): string[] {
  const events = r.truth.events;
  return [
    r.spec.tool,
    textModeOf(r.spec),
    String(r.spec.streams),
    String(r.spec.totalTokens),
    String(r.spec.pct),
    String(events),
    fmt(r.clientCpuUsPerEvent, 1),
    events > 0 ? fmt((r.client.cpuMs * 1000) / events, 1) : "-",
    fmt(r.client.cpuMs / 1000, 2),
    fmt(r.client.wallMs / 1000, 1),
    fmt(r.client.hwmMiB, 0),
    fmt(r.client.maxRssMiB, 0),
    String(r.mockMaxInFlight),
    r.note,
  ];
}

/**
 * Runs the long-prompt trials (warmbench at 4096 and 512 streams, the Python script at 512) on incremental text,
 * and warmbench at 512 on SGLang's default cumulative text.
 */
export async function runResources(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const totalTokens = ctx.quick ? 8000 : 70_000;
  const plan: Array<{ tool: Tool; streams: number; textMode: TextMode }> = ctx.quick
    ? [{ tool: "warmbench", streams: 64, textMode: "incremental" }]
    : [
        { tool: "warmbench", streams: 4096, textMode: "incremental" },
        { tool: "warmbench", streams: 512, textMode: "incremental" },
      ];
  if (ctx.python) plan.push({ tool: "python", streams: ctx.quick ? 16 : 512, textMode: "incremental" });
  plan.push({ tool: "warmbench", streams: ctx.quick ? 64 : 512, textMode: "cumulative" });
  const trials: TrialResult[] = [];
  for (const { tool, streams, textMode } of plan) {
    progress(`resources: ${tool} ${streams} x ${totalTokens}-token prompts (pct 99), ${textMode} text`);
    const r = await runTrial(ctx, {
      tool,
      streams,
      itlMs: 50,
      outputLen: 20,
      totalTokens,
      pct: 99,
      tokenizer: ctx.tokenizers.qwen3,
      timeoutMs: (tool === "python" ? 180 : 240) * 1000,
      textMode,
    });
    trials.push(r);
    progress(`  -> ${row(r).join(" | ")}`);
  }
  const top = trials.find((t) => t.spec.tool === "warmbench" && t.spec.streams === (ctx.quick ? 64 : 4096) && textModeOf(t.spec) === "incremental");
  const hwm = top ? Math.max(top.client.hwmMiB, top.client.maxRssMiB) : NaN;
  return {
    name: "resources",
    title: `Client CPU per event and peak RSS, ${totalTokens}-token prompts at pct 99, 20 events per request (mock itl 50 ms)`,
    columns: [
      "tool",
      "text mode",
      "streams",
      "prompt tokens",
      "pct",
      "events",
      "CPU µs/event (window)",
      "CPU µs/event (whole run)",
      "CPU s (whole run)",
      "wall s",
      "VmHWM MiB",
      "rusage maxrss MiB",
      "max in flight",
      "note",
    ],
    rows: trials.map(row),
    targets: [
      {
        target: `RSS <= 1 GiB at 4096 x 70k-token prompts${ctx.quick ? " (quick: 64 x 8k)" : ""}`,
        measured: top ? `${fmt(hwm, 0)} MiB` : "no data",
        pass: ctx.quick || !top || top.note !== "" ? null : hwm <= GIB_MIB,
      },
      {
        // Checked here, where each request lives for its 20 decode steps after 70k-token prompts went out: in the
        // accuracy trials the first short streams can end before the 4096th request has been sent.
        target: `4096 concurrent streams all in flight at once (mock maxInFlight)${ctx.quick ? " (quick: 64)" : ""}`,
        measured: top ? `${top.mockMaxInFlight} of ${top.spec.streams}` : "no data",
        pass: ctx.quick || !top ? null : top.mockMaxInFlight >= 4096,
      },
    ],
    notes: [
      "pct 99: every prompt shares a 69,300-token prefix (warmed once) and has a 700-token unique suffix; each request still sends all 70,000 ids.",
      "'window' = from the mock's first /generate receipt to its last event (request sending + streaming), CPU from /proc/<pid>/stat sampled every 100 ms (10 ms tick); 'whole run' = rusage of the process (tokenizer load and prompt building included).",
      "text mode: incremental = the mock with --incremental (constant-size events); cumulative = SGLang's default, each event carries the whole text and output ids so far (20 tokens here, so events stay small: the accuracy scenario's cumulative rows have 100).",
      "The Python script is measured at 512 streams only: at 4096 x 70k it would hold 4096 Python lists of 70k ints (~2.3 GB of pointers) and JSON-encode 2 GB in one event loop, beyond this run's time budget.",
    ],
    trials,
    figures: { rssMiB: Number.isFinite(hwm) ? hwm : null, cpuUsPerEvent: top?.clientCpuUsPerEvent ?? null },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
