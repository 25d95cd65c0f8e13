/**
 * The client's own health during a run: event-loop lag and the CPU of the thread that stamps every event. A
 * benchmark client that is itself saturated reports its own queueing as server latency (docs/peers.md §c1), so the run
 * says when that happened - and blames only what the client can be blamed for: the JS thread, not a server or
 * another program sharing the process or the box, and not Bun's HTTP thread, which is reported apart.
 *
 * A late timer alone does not say whose fault it is: on a busy machine the OS may not run the JS thread for a while
 * although it has nothing to do. So each probe tick also reads the JS thread's own CPU time since the last tick, and
 * only the lateness that this work explains (at most the CPU used beyond the tick interval) counts against the client.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createLatencyHistogram, recordMs } from "./histograms.ts";

/** How often the lag probe fires, ms. 100 wake-ups a second cost well under 0.1 % of a core. */
const PROBE_INTERVAL_MS = 10;
/** Above this event-loop lag p99 the client delays its own timestamps noticeably, ms. */
const SATURATED_LOOP_LAG_P99_MS = 5;
/** Above this share of one core on the JS thread, events queue behind the client's own work, %. */
const SATURATED_JS_CPU_PCT = 90;
/** The name Bun gives its HTTP client thread (/proc/self/task/TID/comm). */
const HTTP_THREAD_NAME = "HTTP Client";

/** What the monitor saw between start and stop. */
export interface ClientHealth {
  /** 99th percentile of how late the 10 ms probe timer fired, ms, whatever the cause. */
  loopLagP99Ms: number;
  /** 99th percentile of the lateness the JS thread's own work explains, ms: what the verdict reads. */
  ownLagP99Ms: number;
  /** Worst lateness of the probe timer, ms. */
  loopLagMaxMs: number;
  /** CPU time of the JS thread (which parses and stamps every event) over wall time, % of one core. */
  jsCpuPct: number;
  /** CPU of Bun's HTTP client thread (sockets, TLS, chunking), % of one core; null where it cannot be read. */
  httpCpuPct: number | null;
  /** CPU of the whole process, every thread, % of one core; can exceed 100. Informative only. */
  processCpuPct: number;
}

/** A running monitor; stop() ends it and returns what it measured. */
export interface ClientMonitor {
  stop(): ClientHealth;
}

/** On-CPU time of one of this process's threads, ns, from /proc (Linux); null when unreadable. */
function threadCpuNs(tid: string): number | null {
  try {
    const runNs = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    return Number.isFinite(runNs) ? runNs : null;
  } catch {
    return null;
  }
}

/** The thread id of Bun's HTTP client thread, or null (not Linux, or no fetch made yet). */
function findHttpThread(): string | null {
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === HTTP_THREAD_NAME) return tid;
    }
  } catch {
    // no /proc: not Linux
  }
  return null;
}

/** CPU of the calling (JS) thread, µs; falls back to the whole process where the runtime lacks threadCpuUsage. */
function jsThreadCpuUs(): number {
  const usage = typeof process.threadCpuUsage === "function" ? process.threadCpuUsage() : process.cpuUsage();
  return usage.user + usage.system;
}

/** Starts measuring event-loop lag and CPU; the probe timer is unref'd so it never keeps the process alive. */
export function startClientMonitor(): ClientMonitor {
  const lagUs = createLatencyHistogram();
  const ownLagUs = createLatencyHistogram();
  const processCpuStart = process.cpuUsage();
  const jsCpuStartUs = jsThreadCpuUs();
  const httpTid = findHttpThread();
  const httpCpuStartNs = httpTid === null ? null : threadCpuNs(httpTid);
  const wallStartMs = performance.now();
  let lastTickMs = wallStartMs;
  let lastTickCpuUs = jsCpuStartUs;
  let stopped: ClientHealth | null = null;

  // Lateness is measured from the previous firing, so one long block counts once, not once per missed tick.
  const tick = (nowMs: number): void => {
    const lateMs = nowMs - lastTickMs - PROBE_INTERVAL_MS;
    const cpuUs = jsThreadCpuUs();
    const busyBeyondTickMs = (cpuUs - lastTickCpuUs) / 1000 - PROBE_INTERVAL_MS;
    recordMs(lagUs, lateMs);
    recordMs(ownLagUs, Math.min(lateMs, busyBeyondTickMs));
    lastTickMs = nowMs;
    lastTickCpuUs = cpuUs;
  };
  const timer = setInterval(() => tick(performance.now()), PROBE_INTERVAL_MS);
  timer.unref();

  return {
    stop(): ClientHealth {
      if (stopped !== null) return stopped;
      clearInterval(timer);
      const nowMs = performance.now();
      // A loop still blocked when stop() is called never fired its overdue tick: count that lateness too.
      if (nowMs - lastTickMs - PROBE_INTERVAL_MS > 0) tick(nowMs);
      const wallMs = Math.max(nowMs - wallStartMs, 1e-3);
      const processCpu = process.cpuUsage(processCpuStart);
      const httpCpuNs = httpTid === null || httpCpuStartNs === null ? null : threadCpuNs(httpTid);
      stopped = {
        // HDR reports a bucket's highest equivalent value, which can exceed the exact maximum by one step.
        loopLagP99Ms: lagUs.totalCount > 0 ? Math.min(lagUs.getValueAtPercentile(99), lagUs.maxValue) / 1000 : 0,
        loopLagMaxMs: lagUs.totalCount > 0 ? lagUs.maxValue / 1000 : 0,
        ownLagP99Ms: ownLagUs.totalCount > 0 ? Math.min(ownLagUs.getValueAtPercentile(99), ownLagUs.maxValue) / 1000 : 0,
        jsCpuPct: ((jsThreadCpuUs() - jsCpuStartUs) / 1000 / wallMs) * 100,
        httpCpuPct: httpCpuNs === null || httpCpuStartNs === null ? null : ((httpCpuNs - httpCpuStartNs) / 1e6 / wallMs) * 100,
        processCpuPct: ((processCpu.user + processCpu.system) / 1000 / wallMs) * 100,
      };
      return stopped;
    },
  };
}

/** True when the JS thread was busy enough that its timings include its own delay. */
export function isSaturated(health: ClientHealth): boolean {
  return health.ownLagP99Ms > SATURATED_LOOP_LAG_P99_MS || health.jsCpuPct > SATURATED_JS_CPU_PCT;
}

/** True when timers were late although the JS thread was not busy: other load on the machine delayed them. */
export function delayedByMachine(health: ClientHealth): boolean {
  return health.loopLagP99Ms > SATURATED_LOOP_LAG_P99_MS && !isSaturated(health);
}

/** One line for the log: the figures, and whether the client itself was the bottleneck. */
export function describeSaturation(health: ClientHealth): string {
  const own =
    health.loopLagP99Ms > SATURATED_LOOP_LAG_P99_MS && health.ownLagP99Ms < health.loopLagP99Ms
      ? `, ${health.ownLagP99Ms.toFixed(2)} ms of it the client's own work`
      : "";
  const lag = `event-loop lag p99 ${health.loopLagP99Ms.toFixed(2)} ms (max ${health.loopLagMaxMs.toFixed(1)} ms${own})`;
  const http = health.httpCpuPct === null ? "" : `, HTTP thread ${health.httpCpuPct.toFixed(0)}%`;
  const cpu = `JS thread CPU ${health.jsCpuPct.toFixed(0)}% of one core${http}`;
  if (!isSaturated(health)) return `client healthy: ${lag}, ${cpu}`;
  const why: string[] = [];
  if (health.ownLagP99Ms > SATURATED_LOOP_LAG_P99_MS) why.push(`lag p99 > ${SATURATED_LOOP_LAG_P99_MS} ms`);
  if (health.jsCpuPct > SATURATED_JS_CPU_PCT) why.push(`JS thread CPU > ${SATURATED_JS_CPU_PCT}%`);
  return `client saturated (${why.join(", ")}): ${lag}, ${cpu}; measured latencies include client delay`;
}
