/** Results files: a line appended whole and fsynced, and an output path checked before any request is sent. */
import { accessSync, closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** The system calls an append makes; a test hands in calls that fail part-way. */
export interface AppendIo {
  /** One write(2) of `bytes` from `offset` on; the bytes it took. */
  write(fd: number, bytes: Uint8Array, offset: number): number;
  fsync(fd: number): void;
}

const SYSTEM_IO: AppendIo = { write: (fd, bytes, offset) => writeSync(fd, bytes, offset), fsync: (fd) => fsyncSync(fd) };

/** An append that failed and was undone: `code` is the system's (ENOSPC, EIO), `undone` says what became of the file. */
export class AppendError extends Error {
  override name = "AppendError";
  constructor(
    message: string,
    readonly code: string,
    readonly undone: string,
  ) {
    super(message);
  }
}

/**
 * Appends `data` (whole lines) to `path` in one piece. O_APPEND plus a single write() puts it at the end in one piece,
 * and (with `fsync`) fsync makes it durable. A write or an fsync that fails part-way (a full disk, EIO) is undone: the
 * file is cut back to the length it had (ftruncate), so no reader ever finds a partial last line, and the AppendError
 * thrown names the file, the error and what was undone. Only a regular file is synced and cut back (a pipe, a device
 * has nothing to make durable or to undo).
 */
export function appendWhole(path: string, data: string | Uint8Array, opts: { fsync: boolean; io?: AppendIo | undefined }): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const io = opts.io ?? SYSTEM_IO;
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o644);
  try {
    const st = fstatSync(fd);
    const before = st.isFile() ? st.size : null;
    let written = 0;
    try {
      // Regular files take the whole buffer in one write; the loop only guards against a short write.
      while (written < bytes.length) written += io.write(fd, bytes, written);
      if (opts.fsync && before !== null) io.fsync(fd);
    } catch (err) {
      throw undo(path, fd, before, written, bytes.length, err);
    }
  } finally {
    closeSync(fd);
  }
}

/** Cuts a failed append back to the file's length `before`; the error that says so. */
function undo(path: string, fd: number, before: number | null, written: number, total: number, err: unknown): AppendError {
  const code = (err as NodeJS.ErrnoException).code ?? String(err);
  const what = `${code} after ${written} of ${total} bytes`;
  if (before === null) return new AppendError(`${path}: ${what}`, code, "not a regular file, nothing undone");
  let undone = `cut back to the ${before} bytes it held, no partial line left`;
  try {
    ftruncateSync(fd, before);
  } catch (cut) {
    undone = `cutting it back to ${before} bytes failed too (${(cut as NodeJS.ErrnoException).code ?? cut}): its last line may be partial`;
  }
  return new AppendError(`${path}: ${what}; ${undone}`, code, undone);
}

/**
 * Appends one whole results line, fsynced (appendWhole), so a kill between pcts or a full disk never leaves a half
 * line for the next reader.
 */
export function appendJsonlLine(path: string, line: string, io?: AppendIo): void {
  appendWhole(path, line, { fsync: true, io });
}

/** Throws a UsageError naming `flag` if `path` could not be created or appended to (checked before any request). */
export function checkOutputWritable(path: string, flag: string): void {
  const absolute = resolve(path);
  const dir = dirname(absolute);
  let dirIsDirectory = false;
  try {
    dirIsDirectory = statSync(dir).isDirectory();
  } catch {
    dirIsDirectory = false;
  }
  if (!dirIsDirectory) throw new UsageError(`${flag}: directory ${dir} does not exist`);
  let existing: ReturnType<typeof statSync> | undefined;
  try {
    existing = statSync(absolute);
  } catch {
    existing = undefined;
  }
  if (existing?.isDirectory()) throw new UsageError(`${flag}: ${absolute} is a directory`);
  try {
    accessSync(existing ? absolute : dir, constants.W_OK);
  } catch {
    const what = existing ? `file ${absolute}` : `directory ${dir}`;
    throw new UsageError(`${flag}: ${what} is not writable`);
  }
  // access(2) says yes to root everywhere; only an open and a write prove the file takes lines: an empty write fails
  // on /proc/version (EIO) and /dev/full (ENOSPC) as a real one would, after requests were sent.
  try {
    const fd = openSync(absolute, "a");
    try {
      writeSync(fd, Buffer.alloc(0));
    } finally {
      closeSync(fd);
    }
    if (!existing) unlinkSync(absolute);
  } catch (err) {
    throw new UsageError(`${flag}: cannot write ${absolute}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/**
 * A results file that lines will be appended to: empty, absent, or JSON lines ending in a newline. A binary file, a
 * file whose first line is not a JSON object, or one whose last line was cut off (a killed writer) is refused
 * (exit 2, naming the file and the line) before anything is sent: appending would glue the new line to the torn one
 * and make every reader refuse the whole file.
 */
export function checkResultsAppend(path: string, flag: string): void {
  checkOutputWritable(path, flag);
  let size = 0;
  try {
    const st = statSync(path);
    if (!st.isFile()) return; // /dev/null, a FIFO: nothing to append after
    size = st.size;
  } catch {
    return;
  }
  if (size === 0) return;
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(Math.min(size, 65_536));
    readSync(fd, head, 0, head.length, 0);
    if (head.includes(0)) throw new UsageError(`${flag} ${path}: a binary file, not a results file; choose another path`);
    const text = head.toString("utf8");
    const first = text.split("\n").find((l) => l.trim() !== "");
    if (first !== undefined && !isJsonObjectStart(first, text.length < size)) {
      throw new UsageError(`${flag} ${path}: its first line is not a JSON results line, so it is not a results file; choose another path`);
    }
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 0x0a) {
      const lines = size <= head.length ? text.split("\n").length : null;
      throw new UsageError(
        `${flag} ${path}: its last line${lines === null ? "" : ` (line ${lines})`} is cut off (a writer killed mid-line?); ` +
          "appending would glue the next line to it: remove that line (or end the file with a newline) first, nothing was sent",
      );
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses (exit 2, before anything is sent) a file that `flag` would empty and rewrite (--request-details,
 * --dump-prompts) where it is a results file: the run's own --output-file, or any file whose first line is a results
 * line. 0.4 replaced such a file silently, and its measured lines were gone.
 */
export function checkNotResultsFile(path: string, flag: string, outputFile: string | null | undefined): void {
  if (outputFile && resolve(outputFile) === resolve(path)) throw new UsageError(`${flag} ${path}: the same file as --output-file; give it a file of its own`);
  let size = 0;
  try {
    const st = statSync(path);
    if (!st.isFile()) return;
    size = st.size;
  } catch {
    return;
  }
  if (size === 0) return;
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(Math.min(size, 65_536));
    readSync(fd, head, 0, head.length, 0);
    const text = head.toString("utf8");
    const first = text.split("\n").find((l) => l.trim() !== "");
    if (first !== undefined && isJsonObjectStart(first, text.length < size)) {
      throw new UsageError(`${flag} ${path}: a results file (its first line is a results line), which ${flag} would replace; choose another path`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a line is a results line (a point, a round, a capacity verdict, a 0.1 run header: or, when the first 64 KiB
 * cut it, starts like one): another program's JSON lines are no file to append results to.
 */
function isJsonObjectStart(line: string, truncated: boolean): boolean {
  const t = line.trim();
  if (!t.startsWith("{")) return false;
  try {
    const v = JSON.parse(t.replace(/\bNaN\b|-?\bInfinity\b/g, "null")) as Record<string, unknown>;
    return (
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      (typeof v.shared_prefix_pct === "number" || ["round", "capacity", "run"].includes(String(v.type)))
    );
  } catch {
    return truncated && /"(shared_prefix_pct|type)"/.test(t);
  }
}
