/**
 * The client's self-check judges the client alone: the demo's mock runs in its own process, so a quiet demo never
 * warns; a client whose JS thread is kept busy on purpose is caught and reported.
 */
import { describe, expect, test } from "bun:test";
import { log } from "../../src/log.ts";
import { parseRunOptions } from "../../src/cli/options.ts";
import { runSweep } from "../../src/sweep/run-sweep.ts";
import { openSweepSink } from "../../src/output/sweep-sink.ts";
import { startMockProcess } from "../helpers/mock-process.ts";
import { alive } from "../helpers/process.ts";
import { BINARY, LLAMA2_TOKENIZER } from "../helpers/run-cli.ts";

describe("self-check", () => {
  test("the demo runs its mock as a child process, prints no saturation warning, and leaves no process behind", async () => {
    const proc = Bun.spawn([BINARY, "demo", "--pcts", "0,50", "--num-prompts", "8"], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) console.error(stderr);
    expect(code).toBe(0);
    const mockPid = Number(/mock SGLang server \(pid (\d+)\)/.exec(stderr)?.[1]);
    expect(mockPid).toBeGreaterThan(0);
    expect(mockPid).not.toBe(proc.pid);
    expect(stderr).not.toContain("saturated");
    expect(stdout).not.toContain("Client saturated");
    expect(stdout.split("JS thread CPU (% of one core):").length - 1).toBe(2);
    expect(alive(mockPid)).toBe(false);
  });

  test("a JS thread kept busy on purpose is reported as saturated, with a warning", async () => {
    const mock = await startMockProcess(["--itl-ms", "5", "--prefill-us-per-token", "0"]);
    const warnings: string[] = [];
    const warn = log.warn;
    log.warn = ((message: string) => void warnings.push(String(message))) as typeof log.warn;
    // 15 ms of spinning every 20 ms: events wait behind it, as behind a client that cannot keep up.
    const spinner = setInterval(() => {
      const end = performance.now() + 15;
      while (performance.now() < end) {}
    }, 20);
    try {
      const opts = parseRunOptions({
        model: LLAMA2_TOKENIZER,
        "base-url": mock.url,
        pcts: "0",
        "num-prompts": "8",
        "total-tokens": "100",
        "output-len": "60",
        settle: "0",
      });
      const outcome = await runSweep(opts, { sink: openSweepSink(opts, () => {}) });
      expect(outcome.saturatedPcts).toBe(1);
      const [record] = outcome.records;
      expect(record!.client_saturated).toBe(true);
      expect(record!.client_loop_lag_p99_ms).toBeGreaterThan(5);
      expect(warnings.some((w) => /^0%: client saturated \(lag p99 > 5 ms/.test(w))).toBe(true);
    } finally {
      clearInterval(spinner);
      log.warn = warn;
      await mock.stop();
    }
  });
});
