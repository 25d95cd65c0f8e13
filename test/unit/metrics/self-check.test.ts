import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { delayedByMachine, describeSaturation, isSaturated, startClientMonitor, type ClientHealth } from "../../../src/metrics/self-check.ts";

/** Spins the CPU (and blocks the event loop) for `ms` of wall time. */
function busyFor(ms: number): number {
  const endMs = performance.now() + ms;
  let spins = 0;
  while (performance.now() < endMs) spins++;
  return spins;
}

describe("client self-check monitor", () => {
  test("an idle monitor reports a small lag and almost no JS-thread CPU, whatever other threads do", async () => {
    // Another thread of this process burns a core meanwhile, as Bun's HTTP thread or an in-process server would:
    // the verdict reads the JS thread alone, so an idle client stays idle.
    // A whole suite's heap in this process: a collection it owes would land in the window and read as the JS thread's
    // own lag (11.8 ms at the end of a full run); collected first, the window is the monitor's alone.
    Bun.gc(true);
    const burner = new Worker(URL.createObjectURL(new Blob(["const end = Date.now() + 400; while (Date.now() < end) {} postMessage(1);"])));
    const burnt = new Promise((resolve) => (burner.onmessage = resolve));
    const monitor = startClientMonitor();
    await Bun.sleep(300);
    const health = monitor.stop();
    await burnt;
    burner.terminate();
    // The OS may not run the JS thread at once (a shared box, the burner itself): the raw lag is the machine's; the
    // part the client's own work explains stays small.
    expect(health.loopLagP99Ms).toBeGreaterThanOrEqual(0);
    expect(health.ownLagP99Ms).toBeLessThan(5);
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(health.loopLagP99Ms);
    expect(health.jsCpuPct).toBeGreaterThanOrEqual(0);
    expect(health.jsCpuPct).toBeLessThan(10);
    // The process as a whole was busy: the worker's core shows there, not in the verdict.
    expect(health.processCpuPct).toBeGreaterThan(health.jsCpuPct + 10);
    expect(isSaturated(health)).toBe(false);
    expect(health.ownLagP99Ms).toBeLessThan(5);
  });

  test("Bun's HTTP thread is found and reported apart (Linux)", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("x".repeat(1 << 16)) });
    try {
      await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
      const monitor = startClientMonitor();
      for (let i = 0; i < 50; i++) await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
      // The HTTP thread idles while the JS thread spins: a monitor that took the wrong thread would show the spin.
      busyFor(150);
      const health = monitor.stop();
      if (process.platform === "linux") {
        expect(health.httpCpuPct).not.toBeNull();
        expect(health.httpCpuPct!).toBeGreaterThan(0.05);
        expect(health.httpCpuPct!).toBeLessThan(health.jsCpuPct);
        // One thread of the process, so never more than the whole process.
        expect(health.httpCpuPct!).toBeLessThanOrEqual(health.processCpuPct + 1);
      }
    } finally {
      server.stop(true);
    }
  });

  test("a 200 ms busy loop shows as >= 150 ms of lag and as the JS thread's CPU", async () => {
    const t0 = performance.now();
    const cpu0 = process.threadCpuUsage();
    const monitor = startClientMonitor();
    await Bun.sleep(25);
    busyFor(200);
    await Bun.sleep(30);
    const health = monitor.stop();
    const cpu = process.threadCpuUsage(cpu0);
    // What this thread really got of a core (less than 100 % when the box is shared), as a % of the window.
    const gotMs = (cpu.user + cpu.system) / 1000;
    const gotPct = (gotMs / (performance.now() - t0)) * 100;
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(150);
    // Few samples (about 6), so the p99 is the block itself - and the client's own work explains it.
    expect(health.loopLagP99Ms).toBeGreaterThanOrEqual(150);
    // As much of the block as this thread really ran (all of it on a quiet machine) counts as its own.
    expect(health.ownLagP99Ms).toBeGreaterThan(Math.max(5, (gotMs - 30) * 0.5));
    expect(health.ownLagP99Ms).toBeLessThanOrEqual(health.loopLagP99Ms);
    expect(health.loopLagMaxMs).toBeLessThan(2000);
    // The loop spun on the JS thread itself, and the monitor says so: all the CPU this thread got.
    expect(health.jsCpuPct).toBeGreaterThan(gotPct * 0.8);
    expect(health.jsCpuPct).toBeLessThan(gotPct * 1.2 + 1);
    expect(health.jsCpuPct).toBeGreaterThan(15);
    expect(isSaturated(health)).toBe(true);
  });

  test("a JS thread that is blocked without running (descheduled) is late by the machine's fault, not its own", async () => {
    // Atomics.wait blocks the thread without using CPU, as a machine that does not run the thread would.
    const monitor = startClientMonitor();
    await Bun.sleep(25);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120);
    await Bun.sleep(30);
    const health = monitor.stop();
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(100);
    expect(health.ownLagP99Ms).toBeLessThan(5);
    expect(delayedByMachine(health)).toBe(true);
    expect(isSaturated(health)).toBe(false);
  });

  test("CPU spent in the kernel counts: the JS thread's and the process's figures match what the test measures", () => {
    const t0 = performance.now();
    const thread0 = process.threadCpuUsage();
    const process0 = process.cpuUsage();
    const monitor = startClientMonitor();
    // Reading /proc makes the kernel build the text: a loop with much of its time in system CPU.
    const endMs = performance.now() + 150;
    while (performance.now() < endMs) readFileSync("/proc/self/stat");
    const health = monitor.stop();
    const wallMs = performance.now() - t0;
    const thread = process.threadCpuUsage(thread0);
    const whole = process.cpuUsage(process0);
    expect(thread.system).toBeGreaterThan(0);
    const threadPct = ((thread.user + thread.system) / 1000 / wallMs) * 100;
    const processPct = ((whole.user + whole.system) / 1000 / wallMs) * 100;
    expect(health.jsCpuPct).toBeGreaterThan(threadPct * 0.8);
    expect(health.jsCpuPct).toBeLessThan(threadPct * 1.2 + 1);
    expect(health.processCpuPct).toBeGreaterThan(processPct * 0.8);
    expect(health.processCpuPct).toBeLessThan(processPct * 1.2 + 1);
    expect(health.processCpuPct).toBeGreaterThanOrEqual(health.jsCpuPct * 0.95);
  });

  test("a loop still blocked when stop() is called counts that block", () => {
    const monitor = startClientMonitor();
    busyFor(180);
    const health = monitor.stop();
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(150);
  });

  test("the lag counted at stop() is the block minus the probe interval, never more than the time elapsed", () => {
    const beforeMs = performance.now();
    const monitor = startClientMonitor();
    busyFor(100);
    const health = monitor.stop();
    const elapsedMs = performance.now() - beforeMs;
    // No tick could fire during the block: its lateness is (stop − start) − 10 ms, within HDR's 0.1 % buckets.
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(85);
    expect(health.loopLagMaxMs).toBeLessThanOrEqual((elapsedMs - 10) * 1.002);
  });

  test("stopped at once, before the first tick was due: no lag at all", () => {
    const health = startClientMonitor().stop();
    expect(health.loopLagMaxMs).toBe(0);
    expect(health.loopLagP99Ms).toBe(0);
  });

  test("stop() is idempotent and the probe is cheap", async () => {
    const monitor = startClientMonitor();
    await Bun.sleep(50);
    const first = monitor.stop();
    await Bun.sleep(30);
    expect(monitor.stop()).toBe(first);
  });

  test("the probe timer does not keep a process alive", async () => {
    const module = resolve(import.meta.dir, "../../../src/metrics/self-check.ts");
    const script = `import { startClientMonitor } from ${JSON.stringify(module)}; startClientMonitor(); console.log("started");`;
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const killer = setTimeout(() => proc.kill(), 10_000);
    const code = await proc.exited;
    clearTimeout(killer);
    expect(await new Response(proc.stdout).text()).toContain("started");
    expect(proc.signalCode).toBeNull();
    expect(code).toBe(0);
  });
});

describe("saturation verdict", () => {
  const healthy: ClientHealth = { loopLagP99Ms: 0.4, loopLagMaxMs: 2.1, ownLagP99Ms: 0.3, jsCpuPct: 35, httpCpuPct: 12, processCpuPct: 180 };

  test("thresholds: lag p99 above 5 ms or JS-thread CPU above 90% of one core; other threads never count", () => {
    expect(isSaturated(healthy)).toBe(false);
    expect(isSaturated({ ...healthy, ownLagP99Ms: 5 })).toBe(false);
    expect(isSaturated({ ...healthy, ownLagP99Ms: 5.01 })).toBe(true);
    // Late timers the client's own work does not explain (the OS ran something else) are the machine's, not its.
    expect(isSaturated({ ...healthy, loopLagP99Ms: 40, ownLagP99Ms: 0.2 })).toBe(false);
    expect(delayedByMachine({ ...healthy, loopLagP99Ms: 40, ownLagP99Ms: 0.2 })).toBe(true);
    expect(delayedByMachine({ ...healthy, loopLagP99Ms: 40, ownLagP99Ms: 30 })).toBe(false);
    expect(delayedByMachine(healthy)).toBe(false);
    expect(isSaturated({ ...healthy, jsCpuPct: 90 })).toBe(false);
    expect(isSaturated({ ...healthy, jsCpuPct: 91 })).toBe(true);
    // A large max alone (one GC pause) is not saturation, nor is a busy HTTP thread or a busy process.
    expect(isSaturated({ ...healthy, loopLagMaxMs: 80 })).toBe(false);
    expect(isSaturated({ ...healthy, httpCpuPct: 99, processCpuPct: 400 })).toBe(false);
  });

  test("the description names the figures and the reason", () => {
    expect(describeSaturation(healthy)).toBe("client healthy: event-loop lag p99 0.40 ms (max 2.1 ms), JS thread CPU 35% of one core, HTTP thread 12%");
    const busy = describeSaturation({ ...healthy, loopLagP99Ms: 12.345, ownLagP99Ms: 12.345, loopLagMaxMs: 40, jsCpuPct: 97.4 });
    expect(busy).toStartWith("client saturated (lag p99 > 5 ms, JS thread CPU > 90%)");
    expect(busy).toContain("p99 12.35 ms");
    expect(busy).toContain("JS thread CPU 97% of one core");
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 1, jsCpuPct: 120, httpCpuPct: null })).toStartWith("client saturated (JS thread CPU > 90%)");
    expect(describeSaturation({ ...healthy, httpCpuPct: null })).toBe("client healthy: event-loop lag p99 0.40 ms (max 2.1 ms), JS thread CPU 35% of one core");
    // Lag that is all the client's own, or exactly at the threshold, is not split.
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 12, ownLagP99Ms: 12 })).not.toContain("of it the client's own work");
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 5, ownLagP99Ms: 0.2 })).not.toContain("of it the client's own work");
    expect(delayedByMachine({ ...healthy, loopLagP99Ms: 5, ownLagP99Ms: 0.2 })).toBe(false);
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 40, ownLagP99Ms: 0.2 })).toContain("(max 2.1 ms, 0.20 ms of it the client's own work)");
    // A figure exactly at its threshold is not a reason, even when the other one is.
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 5, ownLagP99Ms: 5, jsCpuPct: 95 })).toStartWith("client saturated (JS thread CPU > 90%):");
    expect(describeSaturation({ ...healthy, loopLagP99Ms: 6, ownLagP99Ms: 6, jsCpuPct: 90 })).toStartWith("client saturated (lag p99 > 5 ms):");
  });
});
