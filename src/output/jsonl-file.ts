/** Results files: a line appended whole and fsynced, and an output path checked before any request is sent. */
import { accessSync, closeSync, constants, fsyncSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/**
 * Appends one whole line to a file. O_APPEND plus a single write() puts the line at the end in one piece,
 * and fsync makes it durable, so a kill between pcts never leaves a half line for the next reader.
 */
export function appendJsonlLine(path: string, line: string): void {
  const bytes = Buffer.from(line, "utf8");
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o644);
  try {
    let written = writeSync(fd, bytes);
    // Regular files take the whole buffer in one write; the loop only guards against a short write.
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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
  // access(2) says yes to root everywhere; only an open proves the file can be created (e.g. not under /proc).
  try {
    closeSync(openSync(absolute, "a"));
    if (!existing) unlinkSync(absolute);
  } catch (err) {
    throw new UsageError(`${flag}: cannot create ${absolute}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}
