/** A measuring run's exit code (docs/reference/exit-codes.md), with the line that says why on stderr. */
import { EXIT } from "../errors.ts";
import type { GateFailure } from "../gates/evaluate.ts";
import { log } from "../log.ts";
import { outputFailures } from "../write-guard.ts";
import { formatCell } from "../report/text-table.ts";

export interface Verdicts {
  interrupted: boolean;
  cacheFailures: number;
  saturated: number;
  failedRequests: number;
  gateFailures: GateFailure[];
}

/**
 * The first that applies, in docs/reference/exit-codes.md's order: 130, 9, 4, 5, 6, 3, 0. Results that could not be
 * written (9) outrank every verdict on them. A measurement that cannot be
 * trusted (4, 5) outranks a verdict on it (6); a verdict the user asked for outranks failed requests alone (3).
 */
export function exitCodeFor(o: Verdicts, strict: boolean, unit: string): number {
  if (o.interrupted) return EXIT.interrupted;
  const lost = outputFailures();
  if (lost.length > 0) {
    log.error(`${lost.length} output(s) could not be written (${lost.join("; ")}): exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  if (o.cacheFailures > 0) {
    log.error(`--verify-cache strict: the cache check failed for ${o.cacheFailures} ${unit}(s): exit code ${EXIT.cacheMismatch}`);
    return EXIT.cacheMismatch;
  }
  if (o.saturated > 0 && strict) {
    log.error(`--strict: the client was saturated during ${o.saturated} ${unit}(s): exit code ${EXIT.clientSaturated}`);
    return EXIT.clientSaturated;
  }
  if (o.gateFailures.length > 0) {
    const first = o.gateFailures[0]!;
    log.error(
      `${o.gateFailures.length} gate verdict(s) failed, first ${first.expr} at ${first.line} (value ${formatCell(first.value)}): exit code ${EXIT.gateFailed}`,
    );
    return EXIT.gateFailed;
  }
  if (o.failedRequests > 0) {
    log.warn(`${o.failedRequests} measured request(s) failed: exit code ${EXIT.requestsFailed}`);
    return EXIT.requestsFailed;
  }
  return EXIT.ok;
}
