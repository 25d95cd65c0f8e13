/** The most of something in force at one instant, over spans that may overlap. Pure. */

export interface Span {
  startMs: number;
  endMs: number;
}

/**
 * Each span holds its weight (1: a request in flight) from its start to its end; overlapping spans add up. Ends come
 * before starts at the same instant: a slot handed on, or a run that ends as another starts, is not two at once.
 */
export function peakOverlap(spans: readonly Span[], weightOf: (index: number) => number = () => 1): number {
  const events: [number, number][] = [];
  spans.forEach((s, i) => {
    const w = weightOf(i);
    events.push([s.startMs, w], [s.endMs, -w]);
  });
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of events) {
    now += d;
    if (now > peak) peak = now;
  }
  return peak;
}
