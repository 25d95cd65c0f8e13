/**
 * One flag's value, parsed as the script's argparse would read it (ints, floats, inf, Python ints of any size, JSON,
 * URLs, lists to sweep): a raw citty string in, a checked value out, or one UsageError naming the flag (exit 2).
 */
import { parseRelative } from "./relative.ts";
import { checkBound } from "./bounds.ts";
import { UsageError } from "../errors.ts";

/** A client's pause between its turns, seconds. */
export type ThinkTime = { kind: "fixed"; s: number } | { kind: "exp"; meanS: number } | { kind: "uniform"; lowS: number; highS: number };

/** Raw flag values as citty hands them over: strings and booleans, keyed by kebab-case name. */
export type RawFlags = Record<string, string | boolean | undefined>;

const INT_RE = /^[+-]?\d+$/;

/** Parses a Python-style int flag (argparse `type=int`); throws a UsageError naming the flag. */
export function parseIntFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = value.trim().replaceAll("_", "");
  if (!INT_RE.test(text)) throw new UsageError(`--${flag}: expected an integer, got "${value}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag}: ${value} is too large`);
  if (n < min) throw new UsageError(`--${flag}: must be >= ${min}, got ${n}`);
  if (n > max) throw new UsageError(`--${flag}: must be <= ${max}, got ${n}`);
  checkBound(flag, n);
  return n;
}

/** An integer flag of at least `min`; below it, `why` says what would go wrong (`--flag N: why`). */
export function parseIntAtLeast(flag: string, value: string, min: number, why: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseIntFlag(flag, value, Number.MIN_SAFE_INTEGER, max);
  if (n < min) throw new UsageError(`--${flag} ${n}: ${why}`);
  return n;
}

/** Parses a non-negative decimal number of seconds (or ms), naming the flag on error. */
export function parseNumberFlag(flag: string, value: string, min: number): number {
  const text = value.trim();
  const n = text === "" ? NaN : Number(text);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, got "${value}"`);
  if (n < min) throw new UsageError(`--${flag}: must be >= ${min}, got ${n}`);
  checkBound(flag, n);
  return n;
}

/**
 * `--pcts 0,50,99`, split as the script does (`int(p.strip())` of every non-blank part). A repeated pct is run
 * again, as the script would; a list that leaves nothing to run, or a pct outside [0, 100] (the script would build
 * prompts of another length than --total-tokens), is explained and refused.
 */
export function parsePcts(value: string): number[] {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) {
    throw new UsageError(`--pcts "${value}": no percentage to sweep, so nothing would be measured (e.g. --pcts 0,50,90)`);
  }
  const pcts = parts.map((p) => parseIntFlag("pcts", p, Number.MIN_SAFE_INTEGER));
  for (const p of pcts) {
    if (p < 0 || p > 100) {
      throw new UsageError(`--pcts ${p}: a shared-prefix percentage must be in [0, 100]; the script would build prompts of another length than --total-tokens`);
    }
  }
  return pcts;
}

/**
 * `--working-set 1,4,16`: how many distinct shared prefixes rotate through a pct's prompts, each size one point of
 * the sweep. 0 would leave the prompts nothing to share (and nothing to warm), so it is refused.
 */
export function parseWorkingSets(value: string): number[] {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) throw new UsageError(`--working-set "${value}": no working-set size given (e.g. --working-set 1,4,16)`);
  return parts.map((p) => {
    const k = parseIntFlag("working-set", p, Number.MIN_SAFE_INTEGER);
    if (k < 1) {
      throw new UsageError(`--working-set ${k}: a working set holds at least one shared prefix (1 = every prompt shares the same one)`);
    }
    return k;
  });
}

/** A Python float as float() reads it: a decimal number, or inf/infinity; null when it is neither. */
function parsePyFloat(text: string): number | null {
  const t = text.trim().toLowerCase().replaceAll("_", "");
  if (/^[+]?(inf|infinity)$/.test(t)) return Infinity;
  if (/^[+-]?(inf|infinity)$/.test(t)) return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}

/** `--request-rate 4` or a list to sweep, `1,2,4,inf`: each > 0 requests/s, or inf (the closed loop). */
export function parseRequestRates(value: string): number[] {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) throw new UsageError(`--request-rate "${value}": no rate given (e.g. --request-rate 8, or inf)`);
  return parts.map((p) => {
    const rate = parsePyFloat(p);
    if (rate === null) throw new UsageError(`--request-rate: expected a number of requests/s or inf, got "${p}"`);
    if (!(rate > 0)) throw new UsageError(`--request-rate ${p}: a rate must be > 0 requests/s (inf sends each request as soon as a slot is free)`);
    return rate;
  });
}

/** A positive number (or inf where `infinite` allows it), naming the flag on error. */
export function parsePositive(flag: string, value: string, what: string, infinite: boolean): number {
  const n = parsePyFloat(value);
  if (n === null || (!infinite && !Number.isFinite(n))) throw new UsageError(`--${flag}: expected ${what}, got "${value}"`);
  if (!(n > 0)) throw new UsageError(`--${flag} ${value}: must be > 0`);
  checkBound(flag, n);
  return n;
}

/** `--seed`: a Python int of any size (random.Random uses its absolute value). */
export function parseSeed(value: string): bigint {
  const text = value.trim().replaceAll("_", "");
  if (!INT_RE.test(text)) throw new UsageError(`--seed: expected an integer, got "${value}"`);
  return BigInt(text);
}

/** `--extra-request-body`: a JSON object merged over the request payload, as the script does. */
export function parseExtraBody(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new UsageError(`--extra-request-body: not valid JSON (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UsageError(`--extra-request-body: expected a JSON object, got ${JSON.stringify(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * `--base-url`, or http://HOST:PORT; must be an http(s) URL. Returned without a trailing slash, and without its
 * userinfo (`http://admin:SEKRIT@host`): the credentials go apart, into every request's Authorization header, so the
 * URL that reaches the JSONL, the history, the reports and every log line holds no password.
 */
export function parseBaseUrl(baseUrl: string | undefined, host: string, port: number): { baseUrl: string; urlCredentials: string | null } {
  const text = baseUrl ?? `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
  const flag = baseUrl === undefined ? "host" : "base-url";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--${flag}: "${redactUrl(text)}" is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--${flag}: "${redactUrl(text)}" must start with http:// or https://`);
  }
  if (url.search || url.hash) throw new UsageError(`--${flag}: "${redactUrl(text)}" must not have a query or fragment`);
  if (url.username === "" && url.password === "") return { baseUrl: text.replace(/\/+$/, ""), urlCredentials: null };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = "";
  url.password = "";
  return { baseUrl: url.toString().replace(/\/+$/, ""), urlCredentials: credentials };
}

/** A URL as it may be shown: its password (and user) replaced, for the one message that shows a URL as given. */
const redactUrl = (text: string): string => text.replace(/^(https?:\/\/)[^/@]*@/i, "$1(credentials redacted)@");

export const str = (raw: RawFlags, key: string): string | undefined => {
  const v = raw[key];
  if (v === undefined || v === false) return undefined;
  if (v === true) throw new UsageError(`--${key}: expects a value`);
  return v;
};

export function oneOf<T extends string>(raw: RawFlags, flag: string, choices: readonly T[], dflt: T): T {
  const v = str(raw, flag) ?? dflt;
  if (!(choices as readonly string[]).includes(v)) {
    throw new UsageError(`--${flag}: "${v}" is not supported (choose from: ${choices.join(", ")})`);
  }
  return v as T;
}

export function parseFraction(flag: string, value: string): number {
  return parseRelative(flag, value, { min: 0, max: 1, what: "a share of the requests" });
}

/** `--think-time 0.5` (fixed), `exp:0.5` (exponential, mean 0.5 s) or `uniform:0.2:0.8` (seconds). */
export function parseThinkTime(value: string): ThinkTime {
  const text = value.trim();
  const parts = text.split(":");
  const secs = (v: string | undefined): number => parseNumberFlag("think-time", v ?? "", 0);
  if (parts.length === 1) return { kind: "fixed", s: secs(parts[0]) };
  if (parts[0] === "exp" && parts.length === 2) return { kind: "exp", meanS: secs(parts[1]) };
  if (parts[0] === "uniform" && parts.length === 3) {
    const lowS = secs(parts[1]);
    const highS = secs(parts[2]);
    if (highS < lowS) throw new UsageError(`--think-time ${text}: the upper bound is below the lower one`);
    return { kind: "uniform", lowS, highS };
  }
  throw new UsageError(`--think-time "${value}": expected seconds (0.5), exp:MEAN or uniform:LOW:HIGH`);
}

/** `--precision 5%`: a fraction in (0, 0.5). */
export function parsePrecision(text: string): number {
  const p = parseRelative("precision", text, { min: 0, max: 0.5, minOpen: true, what: "the bracket's width relative to its low end, e.g. 5%" });
  if (p >= 0.5) throw new UsageError(`--precision ${text}: must be above 0% and below 50% (the bracket's width relative to its low end, e.g. 5%)`);
  return p;
}
