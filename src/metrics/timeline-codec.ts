/**
 * The timeline's per-bucket series in few bytes. Plain JSON arrays cannot hold seven series of 120 buckets in 2 KB:
 * Python's ", " separator alone costs 2 B a value, 1680 B for 840 values. So each series is one string: per bucket,
 * an integer in the series' unit (SERIES_UNITS), written as its difference from the previous bucket's (zigzag, + 1;
 * 0 is null, which leaves the previous value as it was), 5 bits per base64url character, low bits first, a
 * character >= 32 meaning that more follow. A steady bucket costs one or two characters. Pure.
 *
 * In Python (`series(line["timeline"]["itl_ms"], 0.01)`):
 *   A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
 *   def series(text, unit):
 *       out, v, s, prev = [], 0, 0, 0
 *       for c in text:
 *           d = A.index(c); v |= (d & 31) << s; s += 5
 *           if d >= 32: continue
 *           if v == 0: out.append(None)
 *           else: prev += (v - 1) >> 1 if v % 2 else -(v >> 1); out.append(round(prev * unit, 2))
 *           v = s = 0
 *       return out
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** What one integer step of each series is worth (requests, tokens, ms or %). */
export const SERIES_UNITS = {
  started: 1,
  finished: 1,
  in_flight: 0.1,
  output_tokens: 1,
  ttft_ms: 0.01,
  itl_ms: 0.01,
  cached_pct: 0.1,
} as const;
export type SeriesName = keyof typeof SERIES_UNITS;
export const SERIES_NAMES = Object.keys(SERIES_UNITS) as SeriesName[];

/**
 * A value on its series' integer grid; a float series keeps 3 significant digits (what a bucket's mean can mean),
 * rounded once to the coarser of the two (4.449 at 0.1 is 4.4, not 4.45 then 4.5).
 */
function toSteps(v: number, unit: number): number {
  if (unit === 1 || v === 0) return Math.round(v / unit);
  const q = Math.max(unit, 10 ** (Math.floor(Math.log10(Math.abs(v))) - 2));
  return Math.round(v / q) * Math.round(q / unit);
}

export function encodeSeries(values: readonly (number | null)[], unit: number): string {
  let out = "";
  let prev = 0;
  for (const v of values) {
    let token = 0;
    if (v !== null) {
      const steps = toSteps(v, unit);
      const d = steps - prev;
      token = (d >= 0 ? 2 * d : -2 * d - 1) + 1;
      prev = steps;
    }
    do {
      const low = token % 32;
      token = Math.floor(token / 32);
      out += ALPHABET[token > 0 ? low + 32 : low];
    } while (token > 0);
  }
  return out;
}

/** The values back, in the series' unit (rounded to what the unit holds, so 0.1 x 3 reads 0.3); throws on a foreign character. */
export function decodeSeries(text: string, unit: number): (number | null)[] {
  const decimals = Math.max(0, -Math.floor(Math.log10(unit) + 1e-9));
  const out: (number | null)[] = [];
  let token = 0,
    scale = 1,
    prev = 0;
  for (const c of text) {
    const d = ALPHABET.indexOf(c);
    if (d < 0) throw new Error(`timeline series: '${c}' is not a base64url character`);
    token += (d % 32) * scale;
    scale *= 32;
    if (d >= 32) continue;
    if (token === 0) out.push(null);
    else {
      const z = token - 1;
      prev += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      out.push(Number((prev * unit).toFixed(decimals)));
    }
    token = 0;
    scale = 1;
  }
  return out;
}
