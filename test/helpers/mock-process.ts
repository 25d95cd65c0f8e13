/** `dist/warmbench mock --port 0 ...` as a child process, for tests where the server itself must die or misbehave. */
import type { Subprocess } from "bun";
import { BINARY } from "./run-cli.ts";

/** A mock server running as its own process. */
export interface MockProcess {
  /** Base URL from its "listening on" line, without a trailing slash. */
  url: string;
  proc: Subprocess<"ignore", "ignore", "pipe">;
  /** SIGTERM (if still running) and wait for the exit; returns the exit code. */
  stop(): Promise<number>;
}

const LISTENING = /warmbench mock listening on (http:\/\/\S+)/;

/** Starts the mock with `args` (port 0 is added) and waits for its first stderr line. */
export async function startMockProcess(args: string[], startTimeoutMs = 15_000): Promise<MockProcess> {
  const proc = Bun.spawn([BINARY, "mock", "--port", "0", ...args], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const url = await readListeningUrl(proc, startTimeoutMs);
  return {
    url,
    proc,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

async function readListeningUrl(proc: Subprocess<"ignore", "ignore", "pipe">, timeoutMs: number): Promise<string> {
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`mock exited before listening (code ${await proc.exited}): ${seen}`);
      seen += decoder.decode(value, { stream: true });
      const match = LISTENING.exec(seen);
      if (match) return match[1]!;
    }
  } finally {
    clearTimeout(timer);
    // Keep draining stderr so the child never blocks on a full pipe.
    reader.releaseLock();
    void proc.stderr.pipeTo(new WritableStream()).catch(() => {});
  }
}
