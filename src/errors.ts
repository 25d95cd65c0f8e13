/** Bad flags or input files: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly exitCode = 2;
}

/** The run could not go on (server down, flush or warm never succeeded): one line, exit code 1. */
export class BenchError extends Error {
  override name = "BenchError";
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Exit codes, documented in docs/reference/exit-codes.md (generated from this table by docs/generate.ts). */
export const EXIT = {
  ok: 0,
  runtime: 1,
  usage: 2,
  /** The sweep finished but at least one measured request failed. */
  requestsFailed: 3,
  /** --verify-cache strict: cached tokens disagreed with the expected prefix beyond --cache-tolerance. */
  cacheMismatch: 4,
  /** --strict: the client was saturated, so its numbers may be its own fault. */
  clientSaturated: 5,
  /** A --gate failed at some pct. */
  gateFailed: 6,
  /** `compare`: a metric regressed beyond its limit. */
  regression: 7,
  /** `compare`: no regression, but a repeated line's 95 % interval straddles a limit (--allow-inconclusive accepts it). */
  inconclusive: 8,
  /** An output file could not be written mid-run (a full disk, EIO): named on stderr; the other outputs are complete. */
  outputFailed: 9,
  interrupted: 130,
} as const;
