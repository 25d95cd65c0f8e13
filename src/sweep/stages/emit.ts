/** Stage: a line's record to the console (stdout), the JSONL file and the per-request details; findings to stderr. */
import { log } from "../../log.ts";
import type { RequestRecord } from "../../schema/record.ts";
import { delayedByMachine, describeSaturation } from "../../metrics/self-check.ts";
import { renderConsole } from "../../report/console.ts";
import { appendRequestDetails } from "../../output/details.ts";
import { formatJsonl } from "../../report/jsonl.ts";
import { appendJsonlLine } from "../../output/jsonl-file.ts";
import { formatCell } from "../../report/text-table.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan } from "../plan.ts";
import type { Measurement } from "./measure.ts";
import type { PctSummary } from "./summarize.ts";

export function emitPct(summary: PctSummary, line: LinePlan, m: Measurement, ctx: SweepContext): void {
  const { record, cache } = summary;
  const pct = record.shared_prefix_pct;
  logFailures(m.records);
  for (const problem of cache.problems) log.warn(`cache check (${pct}%): ${problem}`);
  const health = describeSaturation(m.health);
  if (record.client_saturated) log.warn(`${pct}%: ${health}`);
  else if (delayedByMachine(m.health)) log.info(`${pct}%: other load on this machine delayed the client's timers (${health})`);
  else log.debug(health);
  for (const g of record.gates) if (!g.pass) log.warn(`gate failed at ${pct}%: ${g.expr} (value ${formatCell(g.value)})`);
  if (ctx.opts.requestDetails) {
    appendRequestDetails(ctx.opts.requestDetails, ctx.runId, { pct, rate: line.rate, requestIdTag: line.requestIdTag }, m.records);
  }
  ctx.io.out(renderConsole(record));
  if (ctx.opts.outputFile) appendJsonlLine(ctx.opts.outputFile, formatJsonl(record));
}

function logFailures(records: RequestRecord[]): void {
  const failed = records.filter((r) => !r.ok);
  if (failed.length === 0) return;
  log.warn(`${failed.length}/${records.length} requests failed`);
  for (const r of failed.slice(0, 5)) log.warn(`  ${r.failureKind}: ${r.failureMessage.slice(0, 160)}`);
}
