/**
 * The one writer of a command's files (src/output/results-writer.ts) and its append (src/output/jsonl-file.ts): a
 * results line goes on whole and fsynced; a write or an fsync that fails part-way is cut back to the file's last whole
 * line, with an error naming the file, both with injected system calls and on a real full disk (a 16 KiB tmpfs).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppendError, appendJsonlLine, type AppendIo } from "../../../src/output/jsonl-file.ts";
import { openResultsWriter, writeArtifact } from "../../../src/output/results-writer.ts";
import { formatJsonl, parseJsonlLine } from "../../../src/report/jsonl.ts";

const tmp = mkdtempSync(join(tmpdir(), "warmbench-writer-"));

const FIRST = formatJsonl({ shared_prefix_pct: 0, request_rate: Infinity });
const enospc = (): NodeJS.ErrnoException => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

/** The system's write and fsync, each call recorded in order. */
function recordingIo(calls: string[]): AppendIo {
  return {
    write: (fd, bytes, offset) => {
      const n = writeSync(fd, bytes, offset);
      calls.push(`write ${n}`);
      return n;
    },
    fsync: () => void calls.push("fsync"),
  };
}

/** A file holding one whole results line. */
function fileWithOneLine(name: string): string {
  const path = join(tmp, name);
  writeFileSync(path, FIRST);
  return path;
}

describe("appendJsonlLine", () => {
  test("the whole line in one write, then one fsync, after what the file held", () => {
    const path = fileWithOneLine("whole.jsonl");
    const calls: string[] = [];
    const line = formatJsonl({ shared_prefix_pct: 50, text: "ünïcode" });
    appendJsonlLine(path, line, recordingIo(calls));
    expect(calls).toEqual([`write ${Buffer.byteLength(line)}`, "fsync"]);
    expect(readFileSync(path, "utf8")).toBe(FIRST + line);
    expect(parseJsonlLine(readFileSync(path, "utf8").split("\n")[1]!)).toEqual({ shared_prefix_pct: 50, text: "ünïcode" });
  });

  test("a short write is followed by the rest: still one whole line, fsynced once at the end", () => {
    const path = fileWithOneLine("short.jsonl");
    const calls: string[] = [];
    const line = formatJsonl({ shared_prefix_pct: 90, ids: [...Array(50).keys()] });
    const io: AppendIo = {
      // At most 16 bytes a call, as a pipe or a signal might cut a write.
      write: (fd, bytes, offset) => {
        const n = writeSync(fd, bytes, offset, Math.min(16, bytes.length - offset));
        calls.push("write");
        return n;
      },
      fsync: () => void calls.push("fsync"),
    };
    appendJsonlLine(path, line, io);
    expect(calls.filter((c) => c === "write").length).toBe(Math.ceil(Buffer.byteLength(line) / 16));
    expect(calls.at(-1)).toBe("fsync");
    expect(calls.filter((c) => c === "fsync").length).toBe(1);
    expect(readFileSync(path, "utf8")).toBe(FIRST + line);
  });

  test("a write that takes half the line and then fails: the file is cut back to its last whole line, the error names it", () => {
    const path = fileWithOneLine("half.jsonl");
    const line = formatJsonl({ shared_prefix_pct: 50, p99_ttft_ms: 12.5 });
    let calls = 0;
    const io: AppendIo = {
      write: (fd, bytes, offset) => {
        if (calls++ > 0) throw enospc();
        return writeSync(fd, bytes, offset, Math.floor((bytes.length - offset) / 2));
      },
      fsync: () => {
        throw new Error("never reached: the write failed");
      },
    };
    let thrown: unknown;
    try {
      appendJsonlLine(path, line, io);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppendError);
    const err = thrown as AppendError;
    expect(err.code).toBe("ENOSPC");
    expect(err.message).toContain(path);
    expect(err.message).toContain(`ENOSPC after ${Math.floor(Buffer.byteLength(line) / 2)} of ${Buffer.byteLength(line)} bytes`);
    expect(err.undone).toBe(`cut back to the ${Buffer.byteLength(FIRST)} bytes it held, no partial line left`);
    expect(readFileSync(path, "utf8")).toBe(FIRST);
    // The next line lands after the last whole one, as if the failed one had never been tried.
    appendJsonlLine(path, line);
    expect(readFileSync(path, "utf8")).toBe(FIRST + line);
  });

  test("an fsync that fails after the whole line was written: the line is taken back too (it is not known durable)", () => {
    const path = fileWithOneLine("fsync.jsonl");
    const io: AppendIo = {
      write: (fd, bytes, offset) => writeSync(fd, bytes, offset),
      fsync: () => {
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      },
    };
    expect(() => appendJsonlLine(path, formatJsonl({ shared_prefix_pct: 10 }), io)).toThrow(/fsync\.jsonl: EIO after \d+ of \d+ bytes; cut back/);
    expect(readFileSync(path, "utf8")).toBe(FIRST);
  });

  test("a file that did not exist is created, and left empty when its first line fails", () => {
    const path = join(tmp, "fresh.jsonl");
    expect(() =>
      appendJsonlLine(path, FIRST, {
        write: (fd, bytes, offset) => {
          writeSync(fd, bytes, offset, 3);
          throw enospc();
        },
        fsync: () => {},
      }),
    ).toThrow(AppendError);
    expect(readFileSync(path, "utf8")).toBe("");
  });

  test("a character device is neither fsynced nor cut back (nothing to make durable or undo)", () => {
    const calls: string[] = [];
    appendJsonlLine("/dev/null", FIRST, recordingIo(calls));
    expect(calls).toEqual([`write ${Buffer.byteLength(FIRST)}`]);
  });
});

/** A real full disk: a 16 KiB tmpfs (the suite runs as root, as CI does); skipped where it cannot be mounted. */
const small = join(tmp, "small");
function mountSmall(): boolean {
  try {
    mkdirSync(small);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", small], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const mounted = mountSmall();
afterAll(() => {
  if (mounted) execFileSync("umount", [small]);
  rmSync(tmp, { recursive: true, force: true });
});

describe("on a full disk", () => {
  test.skipIf(!mounted)("a line that does not fit fails with ENOSPC, and the file keeps exactly its whole lines", () => {
    const path = join(small, "results.jsonl");
    writeFileSync(path, FIRST);
    // Three of the four pages taken by another file; the line below needs two.
    writeFileSync(join(small, "filler"), Buffer.alloc(12 * 1024, 0x61));
    const big = formatJsonl({ shared_prefix_pct: 50, text: "x".repeat(8 * 1024) });
    let thrown: unknown;
    try {
      appendJsonlLine(path, big);
    } catch (err) {
      thrown = err;
    }
    expect((thrown as AppendError).code).toBe("ENOSPC");
    expect((thrown as AppendError).message).toContain(path);
    expect(readFileSync(path, "utf8")).toBe(FIRST);
    rmSync(join(small, "filler"));
    appendJsonlLine(path, big);
    expect(readFileSync(path, "utf8")).toBe(FIRST + big);
  });
});

describe("openResultsWriter", () => {
  test("results lines, details and prompts each go to their own file, whole; the details and the dump start empty", () => {
    const paths = { outputFile: fileWithOneLine("run.jsonl"), requestDetails: join(tmp, "details.jsonl"), dumpPrompts: join(tmp, "dump.jsonl") };
    writeFileSync(paths.requestDetails, "from an earlier run\n");
    writeFileSync(paths.dumpPrompts, "from an earlier run\n");
    const calls: string[] = [];
    const files = openResultsWriter(paths, recordingIo(calls));
    expect(readFileSync(paths.requestDetails, "utf8")).toBe("");
    expect(readFileSync(paths.dumpPrompts, "utf8")).toBe("");
    files.line({ shared_prefix_pct: 50, request_rate: Infinity });
    files.details(['{"request_id": "a"}', '{"request_id": "b"}']);
    files.details([]);
    files.prompts('{"index":0}\n');
    files.prompts(new TextEncoder().encode('{"index":1}\n'));
    files.prompts("");
    expect(readFileSync(paths.outputFile, "utf8")).toBe(FIRST + formatJsonl({ shared_prefix_pct: 50, request_rate: Infinity }));
    expect(readFileSync(paths.requestDetails, "utf8")).toBe('{"request_id": "a"}\n{"request_id": "b"}\n');
    expect(readFileSync(paths.dumpPrompts, "utf8")).toBe('{"index":0}\n{"index":1}\n');
    // One write then one fsync per append that holds something (the line, a point's details, each prompt batch);
    // empty appends touch nothing.
    expect(calls.filter((c) => c === "fsync").length).toBe(4);
    expect(calls.filter((c) => c.startsWith("write")).length).toBe(4);
    for (let i = 0; i < calls.length; i += 2) {
      expect(calls[i]).toStartWith("write");
      expect(calls[i + 1]).toBe("fsync");
    }
  });

  test("no paths: nothing is written anywhere", () => {
    const files = openResultsWriter(
      { outputFile: null, requestDetails: null, dumpPrompts: null },
      {
        write: () => {
          throw new Error("no write expected");
        },
        fsync: () => {
          throw new Error("no fsync expected");
        },
      },
    );
    files.line({ shared_prefix_pct: 0 });
    files.details(["{}"]);
    files.prompts("{}\n");
  });

  test("a results file with a torn last line is refused before anything is written", () => {
    const path = join(tmp, "torn.jsonl");
    writeFileSync(path, FIRST + FIRST.slice(0, 10));
    expect(() => openResultsWriter({ outputFile: path, requestDetails: null, dumpPrompts: null })).toThrow(/its last line \(line 2\) is cut off/);
    expect(readFileSync(path, "utf8")).toBe(FIRST + FIRST.slice(0, 10));
  });
});

describe("writeArtifact", () => {
  test("writes the whole file, replacing what it held", () => {
    const path = join(tmp, "report.md");
    writeFileSync(path, "an older, longer report\n".repeat(10));
    expect(writeArtifact("--md", path, "# report\n")).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("# report\n");
  });
});
