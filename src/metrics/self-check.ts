/**
 * The client's own health during a run: event-loop lag and process CPU. A benchmark client that is itself
 * saturated reports its own queueing as server latency (peers.md §c1), so the run says when that happened.
 */
import { createLatencyHistogram, recordMs } from "./histograms.ts";

/** How often the lag probe fires, ms. 100 wake-ups a second cost well under 0.1 % of a core. */
const PROBE_INTERVAL_MS = 10;
/** Above this event-loop lag p99 the client delays its own timestamps noticeably, ms. */
export const SATURATED_LOOP_LAG_P99_MS = 5;
/** Above this share of one core (user + sys, all threads) the client is near its limit, %. */
export const SATURATED_CPU_PCT = 90;

/** What the monitor saw between start and stop. */
export interface ClientHealth {
  /** 99th percentile of how late the 10 ms probe timer fired, ms. */
  loopLagP99Ms: number;
  /** Worst lateness of the probe timer, ms. */
  loopLagMaxMs: number;
  /** Process CPU time (user + sys, every thread) over wall time, % of one core; can exceed 100. */
  cpuPct: number;
}

/** A running monitor; stop() ends it and returns what it measured. */
export interface ClientMonitor {
  stop(): ClientHealth;
}

/** Starts measuring event-loop lag and CPU; the probe timer is unref'd so it never keeps the process alive. */
export function startClientMonitor(): ClientMonitor {
  const lagUs = createLatencyHistogram();
  const cpuStart = process.cpuUsage();
  const wallStartMs = performance.now();
  let lastTickMs = wallStartMs;
  let stopped: ClientHealth | null = null;

  // Lateness is measured from the previous firing, so one long block counts once, not once per missed tick.
  const timer = setInterval(() => {
    const nowMs = performance.now();
    recordMs(lagUs, nowMs - lastTickMs - PROBE_INTERVAL_MS);
    lastTickMs = nowMs;
  }, PROBE_INTERVAL_MS);
  timer.unref();

  return {
    stop(): ClientHealth {
      if (stopped !== null) return stopped;
      clearInterval(timer);
      const nowMs = performance.now();
      // A loop still blocked when stop() is called never fired its overdue tick: count that lateness too.
      const overdueMs = nowMs - lastTickMs - PROBE_INTERVAL_MS;
      if (overdueMs > 0) recordMs(lagUs, overdueMs);
      const cpu = process.cpuUsage(cpuStart);
      const wallMs = Math.max(nowMs - wallStartMs, 1e-3);
      stopped = {
        // HDR reports a bucket's highest equivalent value, which can exceed the exact maximum by one step.
        loopLagP99Ms: lagUs.totalCount > 0 ? Math.min(lagUs.getValueAtPercentile(99), lagUs.maxValue) / 1000 : 0,
        loopLagMaxMs: lagUs.totalCount > 0 ? lagUs.maxValue / 1000 : 0,
        cpuPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
      };
      return stopped;
    },
  };
}

/** True when the client was busy enough that its timings include its own delay. */
export function isSaturated(health: ClientHealth): boolean {
  return health.loopLagP99Ms > SATURATED_LOOP_LAG_P99_MS || health.cpuPct > SATURATED_CPU_PCT;
}

/** One line for the log: the figures, and whether the client itself was the bottleneck. */
export function describeSaturation(health: ClientHealth): string {
  const lag = `event-loop lag p99 ${health.loopLagP99Ms.toFixed(2)} ms (max ${health.loopLagMaxMs.toFixed(1)} ms)`;
  const cpu = `CPU ${health.cpuPct.toFixed(0)}% of one core`;
  if (!isSaturated(health)) return `client healthy: ${lag}, ${cpu}`;
  const why: string[] = [];
  if (health.loopLagP99Ms > SATURATED_LOOP_LAG_P99_MS) why.push(`lag p99 > ${SATURATED_LOOP_LAG_P99_MS} ms`);
  if (health.cpuPct > SATURATED_CPU_PCT) why.push(`CPU > ${SATURATED_CPU_PCT}%`);
  return `client saturated (${why.join(", ")}): ${lag}, ${cpu}; measured latencies include client delay`;
}
