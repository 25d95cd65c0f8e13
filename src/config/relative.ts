/**
 * One convention for a relative value in every command: a percent with its sign (`5%`), as --max-regress writes its
 * limits and a gate on a share may (`observed_hit_ratio>=45%`, or as the fraction the key holds, 0.45). A bare
 * number is refused where it could be read two ways (is 10 ten percent, or ten times?), except 0, which is the same
 * either way.
 */
import { UsageError } from "../errors.ts";

/** `5%` -> 0.05; `0` -> 0; within [min, max] as fractions, else a UsageError naming the flag. */
export function parseRelative(flag: string, text: string, range: { min: number; max: number; minOpen?: boolean; what: string }): number {
  const t = text.trim();
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(%?)$/.exec(t);
  if (m === null) throw new UsageError(`--${flag} "${text}": expected a percent, e.g. 5%`);
  const [, digits, sign] = m as unknown as [string, string, string];
  const n = Number(digits);
  if (sign !== "%" && n !== 0)
    throw new UsageError(
      `--${flag} ${text}: write the percent sign (${n * 100 >= 1 && n < 1 ? `${+(n * 100).toFixed(6)}%` : `${n}%`}): relative values take one in every command`,
    );
  const f = sign === "%" ? n / 100 : 0;
  const low = range.minOpen ? f <= range.min : f < range.min;
  if (low || f > range.max) {
    throw new UsageError(
      `--${flag} ${text}: must be ${range.minOpen ? "above" : "at least"} ${range.min * 100}% and at most ${range.max * 100}% (${range.what})`,
    );
  }
  return f;
}
