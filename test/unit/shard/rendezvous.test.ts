/**
 * The one-node Slurm rendezvous played against an impostor: a directory that exists already with another owner,
 * open permissions, or as a symlink is refused; the token is random, in a 0600 file only rank 0 writes; a token
 * file another account could have written is refused. The other account is played for real (chown to uid 65534:
 * the suite runs as root, as CI does).
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newToken } from "../../../src/shard/placement.ts";
import { publishToken, readPublishedToken, securePrivateDir } from "../../../src/shard/rendezvous.ts";

const root = mkdtempSync(join(tmpdir(), "warmbench-rendezvous-"));
const NOBODY = 65534;

describe("the rendezvous directory", () => {
  test("created fresh with mode 0700, and accepted again as it is", () => {
    const dir = join(root, "fresh");
    securePrivateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    securePrivateDir(dir);
  });

  test("an existing world-writable directory, one of another owner, or a symlink is refused naming why", () => {
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => securePrivateDir(open)).toThrow(/its mode is 777, open to other users/);
    const theirs = join(root, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, NOBODY, NOBODY);
    expect(() => securePrivateDir(theirs)).toThrow(new RegExp(`it belongs to uid ${NOBODY}, not to this user`));
    const link = join(root, "link");
    symlinkSync(join(root, "fresh"), link);
    expect(() => securePrivateDir(link)).toThrow(/it is a symbolic link/);
  });
});

describe("the token", () => {
  test("random, written 0600 by rank 0, read by the others", async () => {
    const dir = join(root, "tokens");
    securePrivateDir(dir);
    const file = join(dir, "slurm-1.0.token");
    const a = publishToken(file, newToken());
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await readPublishedToken(file, 1000)).toBe(a);
    // A second step (or run) gets another token: nothing about it follows from the job and step ids.
    const b = publishToken(file, newToken());
    expect(b).not.toBe(a);
    expect(a.length).toBeGreaterThanOrEqual(32);
  });

  test("a token file another account wrote (or left readable) is refused", async () => {
    const dir = join(root, "impostor");
    securePrivateDir(dir);
    const file = join(dir, "slurm-2.0.token");
    writeFileSync(file, "planted", { mode: 0o644 });
    await expect(readPublishedToken(file, 200)).rejects.toThrow(/not this user's private file/);
    chmodSync(file, 0o600);
    chownSync(file, NOBODY, NOBODY);
    await expect(readPublishedToken(file, 200)).rejects.toThrow(/not this user's private file \(uid 65534/);
  });

  test("no token within the deadline: a clear failure", async () => {
    await expect(readPublishedToken(join(root, "none.token"), 150)).rejects.toThrow(/published no token/);
  });
});
