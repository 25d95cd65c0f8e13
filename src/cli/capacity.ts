/**
 * `warmbench capacity`: per pct, the highest load at which every --gate holds, each probe a controlled measurement
 * (flush and proof, warm, send, summarize: one sweep cell through the engine, in a session prepared once per search), the
 * search in src/capacity. Probe lines are appended as they end, one capacity line per pct after its probes; SIGINT
 * or a failing server ends it with every finished probe written.
 */
import { withServedMetrics } from "./served-metrics.ts";
import { log } from "../log.ts";
import { EXIT } from "../errors.ts";
import { createInterrupt } from "../interrupt.ts";
import type { CapacityOptions } from "../config/capacity-options.ts";
import type { CapacityRecord } from "../schema/lines.ts";
import { noProgress } from "../engine/sink.ts";
import type { SearchPoint, PointSession } from "../engine/session.ts";
import { outcomeOf, runCapacity } from "../capacity/run-capacity.ts";
import { probeOptions } from "../capacity/probe-plan.ts";
import type { SearchResult } from "../capacity/search.ts";
import { explainServerLimits } from "../sweep/run-sweep.ts";
import { openSweepSession } from "../sweep/session.ts";
import type { SweepSink } from "../sweep/sink.ts";
import { formatCell } from "../report/text-table.ts";
import { openResultsWriter } from "../output/results-writer.ts";
import { outputFailures } from "../write-guard.ts";
import { startProgress } from "../output/progress.ts";
import { parseCapacityOptions, requirementApplies } from "./capacity-options.ts";
import { renderCapacityTable } from "./capacity-table.ts";
import { type ParsedFlags, write } from "./command.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";

export async function capacityCommand(raw: ParsedFlags): Promise<number> {
  const opts = parseCapacityOptions(raw);
  const inFlight = opts.search === "concurrency" ? opts.bracket[1] : opts.run.maxConcurrency === 0 ? opts.probeRequests : opts.run.maxConcurrency;
  const relaunched = await relaunchWithFetchCap(inFlight);
  if (relaunched !== null) return relaunched;
  return capacity(opts);
}

/**
 * The search's session: the sweep's, prepared once (tokenizer, backend, preflight), each probe a line the search
 * planned (capacity/probe-plan.ts) measured as one cell (reset and prove, warm, send, summarize through the engine).
 */
async function openProbeSession(o: CapacityOptions, signal: AbortSignal): Promise<PointSession<SearchPoint>> {
  const sink: SweepSink = {
    lineStarted() {},
    details() {},
    prompts() {},
    line() {},
    repeated() {},
    progress: o.run.quiet ? noProgress : (total, label) => startProgress(total, label, { quiet: o.run.quiet }),
    ended() {},
  };
  const first = probeOptions(o, o.run.pcts[0]!, { search: o.search, value: Infinity });
  return openSweepSession(first, { sink, signal }, { kind: "single" }, (server) => {
    for (const note of explainServerLimits(o.run, server)) log.warn(note);
  });
}

export function capacity(opts: CapacityOptions): Promise<number> {
  return withServedMetrics(opts.run.serveMetrics, () => searchCapacity(opts));
}

async function searchCapacity(opts: CapacityOptions): Promise<number> {
  const files = openResultsWriter({ outputFile: opts.run.outputFile, dumpPrompts: null, requestDetails: null });
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const file = opts.run.outputFile;
  const lines: CapacityRecord[] = [];
  let session: PointSession<SearchPoint> | null = null;
  try {
    session = await openProbeSession(opts, interrupt.signal);
    const outcome = await runCapacity(opts, {
      session,
      probe(line) {
        // The search's own view of the probe (the evidence check's included: a load not sustained fails it).
        const outcome = outcomeOf(line);
        const verdict = outcome.pass ? "pass" : `fail: ${outcome.failedGates.join(", ")}`;
        const load = opts.search === "rate" ? `${formatCell(line.request_rate)} req/s` : `concurrency ${line.max_concurrency}`;
        log.info(`${line.shared_prefix_pct}% probe ${line.probe} at ${load}: cache ${line.cache_check}, ${verdict}`);
        files.line(line);
      },
      capacity(line: CapacityRecord, result: SearchResult) {
        lines.push(line);
        log.info(
          `${line.shared_prefix_pct}%: ${result.status}, capacity ${formatCell(line.capacity_request_rate ?? line.capacity_concurrency)} in ${result.probesSent} probes (${result.wallS.toFixed(1)} s)`,
        );
        files.line(line);
      },
      signal: interrupt.signal,
    });
    write(renderCapacityTable(lines));
    if (file) log.info(`JSONL results saved to ${file}`);
    return exitCodeOf(opts, outcome.lines, outcome.interrupted);
  } catch (err) {
    // A failing server: what was found so far is reported; every finished probe is already in the file.
    if (lines.length > 0) write(renderCapacityTable(lines));
    throw err;
  } finally {
    await session?.close();
  }
}

/** 130 interrupted; 9 an output not written; 4 a pct whose cache could not be proven; 6 a --require not met; else 0. */
function exitCodeOf(opts: CapacityOptions, lines: readonly CapacityRecord[], interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  if (outputFailures().length > 0) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  const unproven = lines.filter((l) => l.capacity_status === "cache_unproven");
  if (unproven.length > 0) {
    log.error(
      `the cache check failed twice at a probe of ${unproven.map((l) => `${l.shared_prefix_pct}%`).join(", ")}: no capacity there (exit ${EXIT.cacheMismatch})`,
    );
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
