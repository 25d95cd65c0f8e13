import { expect, test } from "bun:test";
import { startProgress } from "../../../src/report/progress.ts";

/** A fake stderr that collects what is written. */
function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stream: { isTTY, write: (s: string) => (chunks.push(s), true) } as unknown as NodeJS.WriteStream };
}

test("on a terminal the line is redrawn in place and cleared at the end", async () => {
  const { chunks, stream } = sink(true);
  const p = startProgress(4, "50%", stream);
  p.settled(true);
  p.settled(false);
  await Bun.sleep(650);
  p.stop();
  expect(chunks.some((c) => /^\r50%: 2\/4 requests done, 1 failed \(\d+ s\)\u001b\[K$/.test(c))).toBe(true);
  expect(chunks.at(-1)).toBe("\r\u001b[K");
});

test("elsewhere nothing is written for short runs (one line per 10 s)", async () => {
  const { chunks, stream } = sink(false);
  const p = startProgress(4, "0%", stream);
  p.settled(true);
  await Bun.sleep(100);
  p.stop();
  expect(chunks).toEqual([]);
});
