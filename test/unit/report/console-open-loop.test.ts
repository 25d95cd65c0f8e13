/** The console's open-loop section: both kinds of TTFT side by side when a rate is set, nothing new without one. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatFixed2, renderConsole } from "../../../src/report/console.ts";
import type { StoredSweepLine } from "../../../src/metrics/sweep-line.ts";
import { parseJsonlLine } from "../../../src/report/jsonl.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/metrics");
const script = parseJsonlLine(readFileSync(join(FIXTURES, "script_results.jsonl"), "utf8").split("\n")[0]!) as StoredSweepLine;

const openLoop: Partial<StoredSweepLine> = {
  request_rate: 8,
  sent: 64,
  burstiness: 1,
  duration_limit_s: null,
  achieved_request_rate: 7.96,
  ttft_from_intended_mean_ms: 912.5,
  ttft_from_intended_median_ms: 640,
  ttft_from_intended_p90_ms: 2100.25,
  ttft_from_intended_p99_ms: 2950,
  e2e_from_intended_mean_ms: 1500,
  e2e_from_intended_median_ms: 1400,
  e2e_from_intended_p90_ms: 2900,
  e2e_from_intended_p99_ms: 3600,
  schedule_lag_mean_ms: 880.5,
  schedule_lag_median_ms: 600,
  schedule_lag_p90_ms: 2000,
  schedule_lag_p99_ms: 2900.75,
};

describe("console: latency from the intended send time", () => {
  test("with a rate: a section after the script's block, the script's block unchanged", () => {
    const closed = renderConsole({ ...script, ...openLoop, request_rate: Infinity });
    const open = renderConsole({ ...script, ...openLoop });
    expect(closed).not.toContain("Intended");
    const section = open.slice(open.indexOf("P99 ITL (ms):")).split("\n").slice(1).join("\n");
    expect(section.split("\n").slice(0, 10).join("\n")).toBe(
      [
        "---------Latency from Intended Send Time----------",
        "Achieved request rate (req/s):           7.96      ",
        `Mean TTFT from send / intended (ms):     ${formatFixed2(script.mean_ttft_ms!)} / 912.50`,
        `Median TTFT from send / intended (ms):   ${formatFixed2(script.median_ttft_ms!)} / 640.00`,
        `P90 TTFT from send / intended (ms):      ${formatFixed2(script.p90_ttft_ms!)} / 2100.25`,
        `P99 TTFT from send / intended (ms):      ${formatFixed2(script.p99_ttft_ms!)} / 2950.00`,
        `Mean E2E from send / intended (ms):      ${formatFixed2(script.mean_e2e_latency_ms!)} / 1500.00`,
        `P99 E2E from send / intended (ms):       ${formatFixed2(script.p99_e2e_latency_ms!)} / 3600.00`,
        "Schedule lag mean / P99 (ms):            880.50 / 2900.75",
        "==================================================",
      ].join("\n"),
    );
    // Everything up to our section is what the closed loop prints, but the rate.
    const head = (text: string) => text.slice(0, text.indexOf("P99 ITL (ms):"));
    expect(head(open)).toBe(head(closed).replace("Traffic request rate:                    inf", "Traffic request rate:                    8.0"));
  });

  test("with --duration: sent and completed within the time", () => {
    const open = renderConsole({ ...script, ...openLoop, duration_limit_s: 30 });
    expect(open).toContain(`\nSent / completed in 30.0 s:              64 / ${script.completed}   \n`);
  });
});
