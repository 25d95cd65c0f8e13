/** The client's health as a line's keys: one group, the same in every kind of line (its verdict is isSaturated's). */
import { isSaturated, type ClientHealth } from "./self-check.ts";

export function clientHealthKeys(h: ClientHealth) {
  return {
    client_loop_lag_p99_ms: h.loopLagP99Ms,
    client_loop_lag_max_ms: h.loopLagMaxMs,
    client_own_lag_p99_ms: h.ownLagP99Ms,
    client_js_cpu_pct: h.jsCpuPct,
    client_http_cpu_pct: h.httpCpuPct,
    client_cpu_pct: h.processCpuPct,
    client_saturated: isSaturated(h),
  };
}
