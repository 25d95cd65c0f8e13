/**
 * `warmbench capacity`: per pct, the highest load at which every --gate holds, each probe a controlled measurement
 * (flush and proof, warm, send, summarize: one sweep point, measured by the sweep's own pipeline over the engine), the
 * search in src/capacity. Probe lines are appended as they end, one capacity line per pct after its probes; SIGINT
 * or a failing server ends it with every finished probe written.
 */
import { log } from "../log.ts";
import { EXIT } from "../errors.ts";
import { createInterrupt } from "../interrupt.ts";
import type { CapacityOptions } from "../config/capacity-options.ts";
import type { RunOptions } from "../config/options.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import type { CapacityRecord } from "../schema/lines.ts";
import { noProgress } from "../engine/sink.ts";
import { newRunId } from "../engine/run-info.ts";
import { runCapacity, type Load } from "../capacity/run-capacity.ts";
import type { SearchResult } from "../capacity/search.ts";
import { runSweep } from "../sweep/run-sweep.ts";
import type { SweepSink } from "../sweep/sink.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { formatCell } from "../report/text-table.ts";
import { openOutputs } from "../output/files.ts";
import { appendJsonlLine } from "../output/jsonl-file.ts";
import { startProgress } from "../output/progress.ts";
import { parseCapacityOptions, requirementApplies } from "./capacity-options.ts";
import { renderCapacityTable } from "./capacity-table.ts";
import { warmbenchCommand, write } from "./command.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";

export const capacityCommand = warmbenchCommand("capacity", "Find the highest load at which every --gate holds, per shared-prefix %, the cache controlled in every probe", async (raw) => {
  const opts = parseCapacityOptions(raw);
  const inFlight = opts.search === "concurrency" ? opts.bracket[1] : opts.run.maxConcurrency === 0 ? opts.probeRequests : opts.run.maxConcurrency;
  const relaunched = await relaunchWithFetchCap(inFlight);
  if (relaunched !== null) return relaunched;
  return capacity(opts);
});

/** The probe's run options: one pct, one line at the probe's load, nothing written by the sweep itself. */
export function probeOptions(o: CapacityOptions, pct: number, load: Load): RunOptions {
  const rate = load.search === "rate" && Number.isFinite(load.value) ? load.value : Infinity;
  // --probe-duration: the rate's arrivals over that time, at least one request.
  const numPrompts = o.probeDurationS !== null && Number.isFinite(rate) ? Math.max(1, Math.round(rate * o.probeDurationS)) : o.probeRequests;
  return {
    ...o.run,
    pcts: [pct],
    requestRates: [rate],
    numPrompts,
    durationS: null,
    maxConcurrency: load.search === "concurrency" ? load.value : o.run.maxConcurrency,
    outputFile: null,
    requestDetails: null,
    dumpPrompts: null,
  };
}

/** Measures one point through the sweep's pipeline (reset and prove, warm, send, summarize) and returns its line. */
async function measurePoint(o: CapacityOptions, pct: number, load: Load, signal: AbortSignal): Promise<PctRecord> {
  const opts = probeOptions(o, pct, load);
  let line: PctRecord | null = null;
  const what = load.search === "rate" ? (Number.isFinite(load.value) ? `${load.value} req/s` : "closed loop (estimate)") : `concurrency ${load.value}`;
  const sink: SweepSink = {
    lineStarted() {},
    details() {},
    line: (r) => void (line = r),
    repeated() {},
    progress: o.run.quiet ? noProgress : (total) => startProgress(total, `${pct}% ${what}`, { quiet: o.run.quiet }),
    ended() {},
  };
  await runSweep(opts, { sink, signal });
  if (line === null) throw new Error(`the probe at ${what} wrote no line`);
  return line;
}

export async function capacity(opts: CapacityOptions): Promise<number> {
  openOutputs({ outputFile: opts.run.outputFile, dumpPrompts: null, requestDetails: null });
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const file = opts.run.outputFile;
  const lines: CapacityRecord[] = [];
  try {
    const outcome = await runCapacity(opts, {
      measure: (pct, load) => measurePoint(opts, pct, load, interrupt.signal),
      probe(line) {
        const verdict = line.gates.every((g) => g.pass) ? "pass" : `fail: ${line.gates.filter((g) => !g.pass).map((g) => `${g.expr} (${formatCell(g.value)})`).join(", ")}`;
        const load = opts.search === "rate" ? `${formatCell(line.request_rate)} req/s` : `concurrency ${line.max_concurrency}`;
        log.info(`${line.shared_prefix_pct}% probe ${line.probe} at ${load}: cache ${line.cache_check}, ${verdict}`);
        if (file) appendJsonlLine(file, formatJsonl(line));
      },
      capacity(line: CapacityRecord, result: SearchResult) {
        lines.push(line);
        log.info(`${line.shared_prefix_pct}%: ${result.status}, capacity ${formatCell(result.capacity)} in ${result.probesSent} probes (${result.wallS.toFixed(1)} s)`);
        if (file) appendJsonlLine(file, formatJsonl(line));
      },
      signal: interrupt.signal,
    }, newRunId());
    write(renderCapacityTable(lines));
    if (file) log.info(`JSONL results saved to ${file}`);
    return exitCodeOf(opts, outcome.lines, outcome.interrupted);
  } catch (err) {
    // A failing server: what was found so far is reported; every finished probe is already in the file.
    if (lines.length > 0) write(renderCapacityTable(lines));
    throw err;
  }
}

/** 130 interrupted; 4 a pct whose cache could not be proven; 6 a --require not met; else 0. */
function exitCodeOf(opts: CapacityOptions, lines: readonly CapacityRecord[], interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  const unproven = lines.filter((l) => l.capacity_status === "cache_unproven");
  if (unproven.length > 0) {
    log.error(`the cache check failed twice at a probe of ${unproven.map((l) => `${l.shared_prefix_pct}%`).join(", ")}: no capacity there (exit ${EXIT.cacheMismatch})`);
    return EXIT.cacheMismatch;
  }
  for (const req of opts.require) {
    for (const l of lines.filter((x) => requirementApplies(req, x.shared_prefix_pct))) {
      const found = l.capacity_request_rate ?? l.capacity_concurrency;
      if (found === null || found < req.value) {
        log.error(`--require ${req.expr}: the capacity at ${l.shared_prefix_pct}% is ${formatCell(found)}, below ${req.value} (exit ${EXIT.gateFailed})`);
        return EXIT.gateFailed;
      }
    }
  }
  return EXIT.ok;
}
