import { expect, test } from "bun:test";
import { formatClock, progressLine, startProgress } from "../../../src/output/progress.ts";

/** A fake stderr that collects what is written. */
function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const write = (s: string): boolean => {
    chunks.push(s);
    return true;
  };
  return { chunks, stream: { isTTY, write } };
}

test("the line holds done/total, req/s, output tok/s, elapsed, ETA and failures", () => {
  const line = progressLine("50%", { done: 16, total: 64, failed: 2, outputTokens: 3200, elapsedS: 8 });
  expect(line).toBe("50%: 16/64 requests, 2.0 req/s, 400 output tok/s, 0:08 elapsed, ETA 0:24, 2 failed");
  expect(progressLine("0%", { done: 0, total: 4, failed: 0, outputTokens: 0, elapsedS: 1 })).toContain("ETA --:--");
  expect(formatClock(3725)).toBe("1:02:05");
});

test("on a terminal the line is redrawn in place, and the final line stays when the pct ends", async () => {
  const { chunks, stream } = sink(true);
  let clock = 0;
  const p = startProgress(4, "50%", { stream, nowMs: () => clock });
  p.settled(true, 10);
  p.settled(false, 0);
  clock = 2000;
  await Bun.sleep(650);
  p.stop();
  expect(chunks[0]).toBe("\r50%: 2/4 requests, 1.0 req/s, 5 output tok/s, 0:02 elapsed, ETA 0:02, 1 failed\u001b[K");
  expect(chunks.at(-1)).toBe("\r50%: 2/4 requests, 1.0 req/s, 5 output tok/s, 0:02 elapsed, ETA 0:02, 1 failed\u001b[K\n");
});

test("elsewhere nothing is written for short runs (one plain line per 10 s)", async () => {
  const { chunks, stream } = sink(false);
  const p = startProgress(4, "0%", { stream });
  p.settled(true, 1);
  await Bun.sleep(100);
  p.stop();
  expect(chunks).toEqual([]);
});

test("--quiet draws nothing, even on a terminal", async () => {
  const { chunks, stream } = sink(true);
  const p = startProgress(4, "0%", { stream, quiet: true });
  p.settled(true, 1);
  await Bun.sleep(600);
  p.stop();
  expect(chunks).toEqual([]);
});
