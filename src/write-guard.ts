/**
 * A failing output never loses the others: every write of a run's files goes through guardedWrite, which on an error
 * (a full disk, EIO) names the flag, the file and the error once, skips that file from then on, and lets every other
 * output go on; the run then exits EXIT.outputFailed (docs/reference/exit-codes.md) unless a weightier code applies.
 * Process-wide, like the interrupt: each command runs in its own process.
 */
import { log } from "./log.ts";

const failed = new Map<string, string>();

/** Runs `write` for the output `flag` at `path`; false (and logged once) when it fails or failed before. */
export function guardedWrite(flag: string, path: string, write: () => void): boolean {
  if (failed.has(path)) return false;
  try {
    write();
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    // What a failed append undid (src/output/jsonl-file.ts: the file cut back to its last whole line).
    const undone = (err as { undone?: unknown }).undone;
    const message = `${flag} ${path}: ${code}${typeof undone === "string" ? ` (${undone})` : ""}: this output is incomplete from here on; every other output goes on`;
    failed.set(path, message);
    log.error(message);
    return false;
  }
}

/** One line per output that failed, in the order they failed. */
export const outputFailures = (): string[] => [...failed.values()];
