/**
 * Where the shards of a one-node Slurm step meet without a secret given to them: a directory only this user can
 * enter (created fresh with mode 0700, and refused when it exists with another owner, other permissions, or as a
 * symlink), holding the coordinator's socket and a token file (mode 0600) that rank 0 writes with a random token
 * and the other ranks read. 0.3 used `$TMPDIR/warmbench-<uid>` whoever owned it and a token hashed from public ids
 * (uid, job, step), so another local account could join the run as a shard.
 */
import { lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { BenchError, UsageError } from "../errors.ts";

const uid = (): number => process.getuid?.() ?? -1;

/** Makes sure `dir` is a directory of this user that nobody else may enter; creates it (0700) when absent. */
export function securePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST")
      throw new UsageError(`--shard auto: cannot create ${dir}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const st = lstatSync(dir);
  const why = st.isSymbolicLink()
    ? "it is a symbolic link"
    : !st.isDirectory()
      ? "it is not a directory"
      : st.uid !== uid()
        ? `it belongs to uid ${st.uid}, not to this user (uid ${uid()})`
        : (st.mode & 0o077) !== 0
          ? `its mode is ${(st.mode & 0o777).toString(8)}, open to other users (it must be 700)`
          : null;
  if (why !== null) throw new UsageError(`--shard auto: ${dir} cannot hold the coordinator's socket: ${why}; remove it, or set TMPDIR to a private directory`);
}

/** Rank 0: writes a fresh random token to `file` (mode 0600, replacing one an earlier step left) and returns it. */
export function publishToken(file: string, token: string): string {
  try {
    unlinkSync(file);
  } catch {
    // none left
  }
  writeFileSync(file, token, { mode: 0o600, flag: "wx" });
  return token;
}

/** Ranks above 0: the token rank 0 published, waiting for it up to `deadlineMs`; the file must be this user's, 0600. */
export async function readPublishedToken(file: string, deadlineMs: number): Promise<string> {
  const until = performance.now() + deadlineMs;
  for (;;) {
    try {
      const st = lstatSync(file);
      if (!st.isFile() || st.uid !== uid() || (st.mode & 0o077) !== 0) {
        throw new BenchError(
          `--shard auto: the token file ${file} is not this user's private file (uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}); refusing to join`,
        );
      }
      const token = readFileSync(file, "utf8").trim();
      if (token !== "") return token;
    } catch (err) {
      if (err instanceof BenchError) throw err;
    }
    if (performance.now() > until) throw new BenchError(`--shard auto: rank 0 published no token at ${file} within ${deadlineMs / 1000} s`);
    await Bun.sleep(50);
  }
}
