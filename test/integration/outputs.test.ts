/**
 * Files are never corrupted and results never lost: an output path that cannot take lines is refused before anything
 * is sent (/dev/full, /proc/version); appending to a file that is not a clean results file (a torn last line, a
 * binary file, a foreign file) is refused and leaves it byte for byte; an output that fails mid-run (a full disk, a
 * real tmpfs of 16 KiB mounted by the test) is named once, every other output completes, and the run exits 9.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-outputs-"));
const small = join(dir, "small");
let mock: MockServer;
let mounted = false;

const run = (extra: string[]) =>
  runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--total-tokens",
    "300",
    "--output-len",
    "8",
    "--num-prompts",
    "8",
    "--settle",
    "0",
    "--quiet",
    ...extra,
  ]);

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 1, ttftBaseMs: 2 }));
  mkdirSync(small);
  // A full disk, for real: a 16 KiB tmpfs (the suite runs as root, as CI does; a failure here names why).
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", small]);
  mounted = true;
});
afterAll(async () => {
  if (mounted) execFileSync("umount", [small]);
  await mock.stop();
});

describe("outputs", () => {
  test("an output that fails mid-run (a full disk) is named once, every other output completes, exit 9", async () => {
    const out = join(dir, "complete.jsonl");
    const details = join(small, "details.jsonl");
    // Three of its four pages taken: the check before the run passes (the file can be created and written), and the
    // first pct's details (8 requests of 32 tokens, about 6 KB) do not fit.
    writeFileSync(join(small, "filler"), Buffer.alloc(12 * 1024, 0x61));
    const r = await run(["--pcts", "0,50,90", "--output-len", "32", "--output-file", out, "--request-details", details]);
    expect(r.code).toBe(9);
    const named = r.stderr.split("\n").filter((l) => l.includes(`--request-details ${details}: ENOSPC`));
    expect(named).toHaveLength(2); // the failure once, and the exit line naming it
    expect(r.stderr).toContain("exit code 9");
    // The write that failed was cut back (src/output/jsonl-file.ts): the details file holds whole lines only.
    expect(r.stderr).toContain("no partial line left");
    const held = readFileSync(details, "utf8");
    expect(held === "" || held.endsWith("\n")).toBe(true);
    for (const l of held.split("\n").filter((x) => x !== "")) expect(() => JSON.parse(l)).not.toThrow();
    // Every line measured is in the results file and on the console; the points after the failure are not measured
    // (0.4 went on measuring into the full disk), unless --keep-going.
    expect(readSweepLines(out).map((l) => l.shared_prefix_pct)).toEqual([0]);
    expect(r.stdout.match(/Serving Benchmark Result/g)).toHaveLength(1);
    expect(r.stderr).toContain("the points still to measure are not (--keep-going measures them anyway)");
    const going = join(dir, "keep-going.jsonl");
    const k = await run(["--pcts", "0,50,90", "--output-len", "32", "--output-file", going, "--request-details", details, "--keep-going"]);
    expect(k.code).toBe(9);
    expect(readSweepLines(going).map((l) => l.shared_prefix_pct)).toEqual([0, 50, 90]);
  });

  test("--dump-prompts on a full disk: the measured line is written and printed, exit 9 naming the flag and the file", async () => {
    // The tmpfs emptied of the case above, then three of its four pages taken again: the check before the run passes,
    // and the first pct's prompts (8 of 300 ids, about 14 KB) do not fit.
    for (const f of readdirSync(small)) rmSync(join(small, f));
    writeFileSync(join(small, "filler"), Buffer.alloc(12 * 1024, 0x61));
    const out = join(dir, "dump-complete.jsonl");
    const dump = join(small, "prompts.jsonl");
    const r = await run(["--pcts", "0,50,90", "--output-file", out, "--dump-prompts", dump]);
    expect(r.code, r.stderr).toBe(9);
    const named = r.stderr.split("\n").filter((l) => l.includes(`--dump-prompts ${dump}: ENOSPC`));
    expect(named).toHaveLength(2); // the failure once, and the exit line naming it
    expect(r.stderr).toContain("exit code 9");
    expect(r.stderr).toContain("no partial line left");
    const held = readFileSync(dump, "utf8");
    expect(held === "" || held.endsWith("\n")).toBe(true);
    for (const l of held.split("\n").filter((x) => x !== "")) expect(JSON.parse(l).input_ids).toBeInstanceOf(Array);
    // The pct whose prompts failed is still measured, written and printed; the points after it are not.
    expect(readSweepLines(out).map((l) => l.shared_prefix_pct)).toEqual([0]);
    expect(r.stdout.match(/Serving Benchmark Result/g)).toHaveLength(1);
    expect(r.stderr).toContain("the points still to measure are not (--keep-going measures them anyway)");
  });

  test("--request-details /dev/full and --output-file /proc/version are refused before anything is sent", async () => {
    const before = mock.stats().generateRequests;
    const full = await run(["--pcts", "0", "--request-details", "/dev/full"]);
    expect(full.code).toBe(2);
    expect(full.stderr).toContain("--request-details: cannot write /dev/full: ENOSPC");
    const proc = await run(["--pcts", "0", "--output-file", "/proc/version"]);
    expect(proc.code).toBe(2);
    expect(proc.stderr).toContain("--output-file: cannot write /proc/version: EIO");
    expect(mock.stats().generateRequests).toBe(before);
  });

  test("appending to a torn, binary or foreign file is refused naming it, and the file is left byte for byte", async () => {
    const good = join(dir, "good.jsonl");
    expect((await run(["--pcts", "0", "--output-file", good])).code).toBe(0);
    const text = readFileSync(good, "utf8");
    const cases: [string, string | Uint8Array, RegExp][] = [
      ["torn.jsonl", text + text.slice(0, 40), /--output-file \S+torn\.jsonl: its last line \(line 2\) is cut off/],
      ["binary.jsonl", new Uint8Array([0x7b, 0x00, 0x01, 0xff, 0x0a]), /--output-file \S+binary\.jsonl: a binary file, not a results file/],
      ["foreign.jsonl", "name,value\na,1\n", /--output-file \S+foreign\.jsonl: its first line is not a JSON results line/],
    ];
    const before = mock.stats().generateRequests;
    for (const [name, content, message] of cases) {
      const path = join(dir, name);
      writeFileSync(path, content);
      const r = await run(["--pcts", "0", "--output-file", path]);
      expect([name, r.code]).toEqual([name, 2]);
      expect(r.stderr).toMatch(message);
      expect(Buffer.compare(readFileSync(path), Buffer.from(content))).toBe(0);
    }
    expect(mock.stats().generateRequests).toBe(before);
    // A clean results file takes the next run's lines after its own.
    expect((await run(["--pcts", "0", "--output-file", good])).code).toBe(0);
    expect(readSweepLines(good)).toHaveLength(2);
  });
});
