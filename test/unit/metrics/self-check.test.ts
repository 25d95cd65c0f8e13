import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { describeSaturation, isSaturated, startClientMonitor, type ClientHealth } from "../../../src/metrics/self-check.ts";

/** Spins the CPU (and blocks the event loop) for `ms` of wall time. */
function busyFor(ms: number): number {
  const endMs = performance.now() + ms;
  let spins = 0;
  while (performance.now() < endMs) spins++;
  return spins;
}

/** CPU time of this process (user + sys, every thread) since `before`, over the wall time since `wallBeforeMs`, %. */
function cpuPctSince(before: NodeJS.CpuUsage, wallBeforeMs: number): number {
  const cpu = process.cpuUsage(before);
  return ((cpu.user + cpu.system) / 1000 / (performance.now() - wallBeforeMs)) * 100;
}

describe("client self-check monitor", () => {
  // Other processes on a shared box delay timers and take the CPU: the figures are checked against what the test
  // measures itself over the same window, not against what an idle machine would give.
  test("an idle monitor agrees with an independent 10 ms timer and with the process's CPU time", async () => {
    const cpuBefore = process.cpuUsage();
    const wallBeforeMs = performance.now();
    const monitor = startClientMonitor();
    let lastMs = performance.now();
    let probeMaxLateMs = 0;
    const late = (nowMs: number) => Math.max(probeMaxLateMs, nowMs - lastMs - 10);
    const probe = setInterval(() => {
      const nowMs = performance.now();
      probeMaxLateMs = late(nowMs);
      lastMs = nowMs;
    }, 10);
    await Bun.sleep(300);
    clearInterval(probe);
    probeMaxLateMs = late(performance.now());
    const health = monitor.stop();
    const truth = cpuPctSince(cpuBefore, wallBeforeMs);
    // Both timers are late by the same stalls, each within one 10 ms interval of the stall; idle, both stay near 0.
    expect(health.loopLagP99Ms).toBeGreaterThanOrEqual(0);
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(health.loopLagP99Ms);
    expect(health.loopLagMaxMs).toBeLessThan(probeMaxLateMs + 11);
    expect(health.cpuPct).toBeGreaterThanOrEqual(0);
    expect(Math.abs(health.cpuPct - truth)).toBeLessThan(5);
  });

  test("a 200 ms busy loop shows as >= 150 ms of lag, and the CPU it took", async () => {
    const cpuBefore = process.cpuUsage();
    const wallBeforeMs = performance.now();
    const monitor = startClientMonitor();
    await Bun.sleep(25);
    busyFor(200);
    await Bun.sleep(30);
    const health = monitor.stop();
    const truth = cpuPctSince(cpuBefore, wallBeforeMs);
    expect(health.loopLagMaxMs).toBeGreaterThanOrEqual(150);
    // Few samples (about 6), so the p99 is the block itself.
    expect(health.loopLagP99Ms).toBeGreaterThanOrEqual(150);
    expect(health.loopLagMaxMs).toBeLessThan(2000);
    expect(Math.abs(health.cpuPct - truth)).toBeLessThan(5);
    expect(isSaturated(health)).toBe(true);
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

  test("stopped before the first tick was due: no more lag than the time past that due time", () => {
    const beforeMs = performance.now();
    const health = startClientMonitor().stop();
    const elapsedMs = performance.now() - beforeMs;
    // Normally 0; a stall between start and stop longer than the 10 ms interval counts, as it should.
    expect(health.loopLagMaxMs).toBeLessThanOrEqual(Math.max(0, elapsedMs - 10) * 1.002);
    expect(health.loopLagP99Ms).toBeLessThanOrEqual(health.loopLagMaxMs);
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
  const healthy: ClientHealth = { loopLagP99Ms: 0.4, loopLagMaxMs: 2.1, cpuPct: 35 };

  test("thresholds: lag p99 above 5 ms or CPU above 90% of one core", () => {
    expect(isSaturated(healthy)).toBe(false);
    expect(isSaturated({ ...healthy, loopLagP99Ms: 5 })).toBe(false);
    expect(isSaturated({ ...healthy, loopLagP99Ms: 5.01 })).toBe(true);
    expect(isSaturated({ ...healthy, cpuPct: 90 })).toBe(false);
    expect(isSaturated({ ...healthy, cpuPct: 91 })).toBe(true);
    // A large max alone (one GC pause) is not saturation.
    expect(isSaturated({ ...healthy, loopLagMaxMs: 80 })).toBe(false);
  });

  test("the description names the figures and the reason", () => {
    expect(describeSaturation(healthy)).toBe("client healthy: event-loop lag p99 0.40 ms (max 2.1 ms), CPU 35% of one core");
    const busy = describeSaturation({ loopLagP99Ms: 12.345, loopLagMaxMs: 40, cpuPct: 97.4 });
    expect(busy).toStartWith("client saturated (lag p99 > 5 ms, CPU > 90%)");
    expect(busy).toContain("p99 12.35 ms");
    expect(busy).toContain("CPU 97% of one core");
    expect(describeSaturation({ loopLagP99Ms: 1, loopLagMaxMs: 3, cpuPct: 120 })).toStartWith("client saturated (CPU > 90%)");
    // A figure exactly at its threshold is not a reason, even when the other one is.
    expect(describeSaturation({ loopLagP99Ms: 5, loopLagMaxMs: 9, cpuPct: 95 })).toStartWith("client saturated (CPU > 90%):");
    expect(describeSaturation({ loopLagP99Ms: 6, loopLagMaxMs: 9, cpuPct: 90 })).toStartWith("client saturated (lag p99 > 5 ms):");
  });
});
