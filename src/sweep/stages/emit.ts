/** Stage: a line's findings to stderr, then its requests' details and the line itself to the sink. */
import { log } from "../../log.ts";
import type { RequestRecord } from "../../schema/record.ts";
import { delayedByMachine, describeSaturation } from "../../metrics/self-check.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan } from "../plan.ts";
import type { LineMeasurement } from "./measure-line.ts";
import type { PointSummary } from "../../engine/summarize.ts";
import type { DetailLine } from "../../engine/request-id.ts";

/** `extra`: per request, what the line adds to its details (several replicas: its replica and ledger terms). */
export function emitPct(summary: PointSummary, line: LinePlan, m: LineMeasurement, ctx: SweepContext, extra?: DetailLine["extra"]): void {
  const { record, cache } = summary;
  const pct = record.shared_prefix_pct;
  logFailures(m.records);
  for (const problem of cache.problems) log.warn(`cache check (${pct}%): ${problem}`);
  const health = describeSaturation(m.health);
  if (record.client_saturated) log.warn(`${pct}%: ${health}`);
  else if (delayedByMachine(m.health)) log.info(`${pct}%: other load on this machine delayed the client's timers (${health})`);
  else log.debug(health);
  ctx.io.sink.details(ctx.runId, { pct, rate: line.rate, requestIdTag: line.requestIdTag, extra }, m.records);
  ctx.io.sink.line(record);
}

function logFailures(records: RequestRecord[]): void {
  const failed = records.filter((r) => !r.ok);
  if (failed.length === 0) return;
  log.warn(`${failed.length}/${records.length} requests failed`);
  for (const r of failed.slice(0, 5)) log.warn(`  ${r.failureKind}: ${r.failureMessage.slice(0, 160)}`);
}
