/**
 * The moments of one point a study's watch may be told: the measurement's start (after the warm, before the first
 * send), and each measured request as it goes out and as it ends (on the hot path: keep them short).
 */
import type { RequestRecord } from "../schema/record.ts";

export interface PointMoments {
  measuring?(): Promise<void>;
  sent?(): void;
  settled?(record: RequestRecord): void;
}

/** One PointMoments over a point's watches: only the moments some watch asked for, so the hot path calls nothing else. */
export function momentsOf(watches: readonly (PointMoments | undefined)[]): PointMoments {
  const all = watches.filter((w): w is PointMoments => w !== undefined);
  const marks = all.filter((w) => w.measuring !== undefined);
  const sends = all.filter((w) => w.sent !== undefined);
  const ends = all.filter((w) => w.settled !== undefined);
  return {
    ...(marks.length === 0 ? {} : { measuring: async () => void (await Promise.all(marks.map((w) => w.measuring!()))) }),
    ...(sends.length === 0
      ? {}
      : {
          sent: () => {
            for (const w of sends) w.sent!();
          },
        }),
    ...(ends.length === 0
      ? {}
      : {
          settled: (record: RequestRecord) => {
            for (const w of ends) w.settled!(record);
          },
        }),
  };
}
