/**
 * Prometheus text exposition (version 0.0.4) into metric families: each sample under the family its `# TYPE` names
 * (a counter's `_total`, a histogram's `_bucket`/`_sum`/`_count` go with their family), labels parsed with their
 * escapes. Pure: the scraper (client/telemetry-scraper.ts) reads the body, this reads the text. A line that is not a
 * sample is skipped, never fatal: a server's /metrics is evidence, not input warmbench must accept.
 */

type FamilyType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

interface MetricSample {
  /** The sample's own name (a histogram's `..._bucket`). */
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: FamilyType;
  help: string;
  samples: MetricSample[];
}

const SUFFIXES = ["_total", "_bucket", "_sum", "_count", "_created", "_gsum", "_gcount"] as const;
const TYPES = new Set<string>(["counter", "gauge", "histogram", "summary", "untyped"]);

/** `a="x",b="y\"z"` into its pairs; null where the text is not a label set. */
function parseLabels(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    while (text[i] === " " || text[i] === ",") i++;
    if (i >= text.length) break;
    const eq = text.indexOf("=", i);
    if (eq < 0 || text[eq + 1] !== '"') return null;
    const name = text.slice(i, eq).trim();
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\" && j + 1 < text.length) {
        j++;
        value += text[j] === "n" ? "\n" : text[j];
      } else value += text[j];
    }
    if (j >= text.length) return null;
    out[name] = value;
    i = j + 1;
  }
  return out;
}

/** The index of the `}` closing a label set opened at `open`, quotes respected; -1: none. */
function closingBrace(line: string, open: number): number {
  let quoted = false;
  for (let i = open + 1; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "}") return i;
  }
  return -1;
}

function parseValue(text: string): number | null {
  const t = text.trim().split(/\s+/)[0] ?? "";
  if (t === "+Inf") return Infinity;
  if (t === "-Inf") return -Infinity;
  if (t === "NaN") return NaN;
  if (t === "") return null;
  const v = Number(t);
  return Number.isNaN(v) ? null : v;
}

/** Every family of the text, by name, in the order first seen. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const family = (name: string): MetricFamily => {
    let f = families.get(name);
    if (f === undefined) {
      f = { name, type: "untyped", help: "", samples: [] };
      families.set(name, f);
    }
    return f;
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
      if (m === null) continue;
      const f = family(m[2]!);
      if (m[1] === "TYPE") f.type = TYPES.has(m[3]!.trim()) ? (m[3]!.trim() as FamilyType) : "untyped";
      else f.help = m[3]!;
      continue;
    }
    const brace = line.indexOf("{");
    const space = line.search(/\s/);
    let name: string;
    let labels: Record<string, string> | null = {};
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      const close = closingBrace(line, brace);
      if (close < 0) continue;
      name = line.slice(0, brace);
      labels = parseLabels(line.slice(brace + 1, close));
      rest = line.slice(close + 1);
    } else {
      if (space < 0) continue;
      name = line.slice(0, space);
      rest = line.slice(space);
    }
    const value = parseValue(rest);
    if (labels === null || value === null || name === "") continue;
    family(familyOf(name, families)).samples.push({ name, labels, value });
  }
  // A family named only by a sample's suffix (`x_total` under `# TYPE x counter`) keeps no empty twin.
  for (const [name, f] of families) if (f.samples.length === 0 && f.help === "" && f.type === "untyped") families.delete(name);
  return families;
}

/** The declared family a sample belongs to: itself, or the name without a known suffix where that one is declared. */
function familyOf(sample: string, families: ReadonlyMap<string, MetricFamily>): string {
  if (families.get(sample)?.type !== undefined && families.get(sample)!.type !== "untyped") return sample;
  for (const s of SUFFIXES) {
    if (!sample.endsWith(s)) continue;
    const base = sample.slice(0, -s.length);
    const f = families.get(base);
    if (f !== undefined && f.type !== "untyped") return base;
  }
  return sample;
}

/** The sum of a family's samples (every label set) named `sample` (default: any sample of the family); null: none. */
export function sumSamples(f: MetricFamily | undefined, sample?: string, skip?: (labels: Readonly<Record<string, string>>) => boolean): number | null {
  if (f === undefined) return null;
  let found = false;
  let total = 0;
  for (const s of f.samples) {
    if (sample !== undefined && s.name !== sample) continue;
    if (skip?.(s.labels) === true || !Number.isFinite(s.value)) continue;
    total += s.value;
    found = true;
  }
  return found ? total : null;
}
