/**
 * The axes of a point: the coordinates that tell its line apart from the others of its run (a sweep line's pct,
 * working set and rate; a round line's round and working set). Which keys are axes is said in the key table.
 */
import { KEYS, type AxisDef, type KeyName } from "./keys.ts";
import type { LineKind } from "./lines.ts";

/** The axis keys, in label order. */
export const AXES: readonly KeyName[] = (Object.keys(KEYS) as KeyName[])
  .filter((name) => "axis" in KEYS[name])
  .sort((a, b) => axisOf(a).rank - axisOf(b).rank);

function axisOf(name: KeyName): AxisDef {
  return (KEYS[name] as { axis: AxisDef }).axis;
}

/** A line read back from a file, of any kind or version: only what the axes need. */
export type AnyLine = Partial<Record<KeyName, unknown>>;

/** "round" for a multi-turn round line, "sweep" for any other (ours, 0.1's, the script's). */
export const lineKind = (line: AnyLine): LineKind => (line.type === "round" ? "round" : "sweep");

/** The axes the line has a number for, in label order. */
export function axesOf(line: AnyLine): Partial<Record<KeyName, number>> {
  const out: Partial<Record<KeyName, number>> = {};
  for (const name of AXES) if (typeof line[name] === "number") out[name] = line[name] as number;
  return out;
}

/**
 * How reports, gates and compare name a line: "50%", "50% ws=4", "50% @ 8 req/s", "round 3"; an axis at its
 * default (a working set of 1, a closed loop) says nothing.
 */
export function lineLabel(line: AnyLine): string {
  return Object.entries(axesOf(line)).map(([name, v]) => axisOf(name as KeyName).label(v)).join("");
}

/** The label without one axis (the series' x axis): "ws=4 @ 8 req/s" for every pct of a cell. */
export function cellLabel(line: AnyLine, without: KeyName): string {
  const parts = Object.entries(axesOf(line)).filter(([name]) => name !== without).map(([name, v]) => axisOf(name as KeyName).label(v));
  return parts.join("").trim();
}
