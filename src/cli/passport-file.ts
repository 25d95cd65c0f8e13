/**
 * `--passport FILE`: a passport `warmbench passport --output-file` wrote, read before anything is sent. Only its
 * measured figures are taken (a figure not measured is none); a file that is no passport is exit 2 naming it.
 */
import { existsSync, readFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import type { RunOptions } from "../config/options.ts";
import { PASSPORT_KIND, PASSPORT_VERSION, type Passport } from "../schema/passport.ts";
import { str, type RawFlags } from "../config/flag-values.ts";
import { FLAG_MAXIMA } from "../config/bounds.ts";

export function parsePassportFlag(raw: RawFlags): Pick<RunOptions, "passport"> {
  const file = str(raw, "passport");
  if (file === undefined) return {};
  if (!existsSync(file)) throw new UsageError(`--passport ${file}: no such file`);
  let p: Partial<Passport>;
  try {
    p = JSON.parse(readFileSync(file, "utf8")) as Partial<Passport>;
  } catch {
    throw new UsageError(`--passport ${file}: not JSON (write one with warmbench passport --output-file)`);
  }
  if (p?.kind !== PASSPORT_KIND) throw new UsageError(`--passport ${file}: not a warmbench passport (write one with warmbench passport --output-file)`);
  checkPassportFields(file, p);
  // A capacity that is only a lower bound is not the capacity.
  const bounded = p.capacity_tokens?.uncertainty?.startsWith("a lower bound") === true;
  const figure = (v: number | null | undefined): number | null => v ?? null;
  const text = (v: string | null | undefined): string | null => (v === undefined || v === "" ? null : v);
  return {
    passport: {
      file,
      pageSize: figure(p.page_size_tokens?.value),
      capacityTokens: bounded ? null : figure(p.capacity_tokens?.value),
      answersCached: p.outputs_cached?.value ?? null,
      insertAt: p.insert_at?.value ?? null,
      engine: text(p.engine),
      serverVersion: text(p.server_version),
      baseUrl: text(p.base_url),
    },
  };
}

/** The most tokens of cache a passport may state: what `warmbench passport --max-tokens` can search at most. */
const MAX_CAPACITY_TOKENS = FLAG_MAXIMA["max-tokens"]!.max;
const MAX_PAGE_SIZE = FLAG_MAXIMA["page-size"]!.max;

/**
 * The passport's own schema, checked before anything is sent (exit 2 naming the file and the field): a forged or
 * damaged file (page 1e18, capacity -5 or 1e300, a page of "16", an unknown version) would be used as a measurement.
 */
function checkPassportFields(file: string, p: Partial<Passport>): void {
  const bad = (field: string, value: unknown, want: string): never => {
    throw new UsageError(
      `--passport ${file}: ${field} is ${JSON.stringify(value) ?? String(value)}, ${want} (write one with warmbench passport --output-file)`,
    );
  };
  if (p.version !== PASSPORT_VERSION) bad("version", p.version, `not a passport version this warmbench reads (${PASSPORT_VERSION})`);
  // The rest of the identity may be absent (a hand-written passport of figures), never of another type.
  if (p.warmbench_version !== undefined && typeof p.warmbench_version !== "string") bad("warmbench_version", p.warmbench_version, "not a version string");
  if (p.engine !== undefined && (typeof p.engine !== "string" || p.engine === "")) bad("engine", p.engine, "not an engine name");
  if (p.server_version !== undefined && p.server_version !== null && typeof p.server_version !== "string")
    bad("server_version", p.server_version, "neither a version string nor null");
  if (p.base_url !== undefined && typeof p.base_url !== "string") bad("base_url", p.base_url, "not a URL");
  const figureValue = (name: "page_size_tokens" | "capacity_tokens" | "outputs_cached" | "insert_at"): unknown => {
    const f = p[name] as unknown;
    if (f === undefined) return null;
    if (typeof f !== "object" || f === null || !("value" in f)) return bad(name, f, "not a passport figure ({value, method, uncertainty, why})");
    const uncertainty = (f as { uncertainty?: unknown }).uncertainty;
    if (uncertainty !== null && uncertainty !== undefined && typeof uncertainty !== "string") bad(`${name}.uncertainty`, uncertainty, "not text or null");
    return (f as { value: unknown }).value;
  };
  const page = figureValue("page_size_tokens");
  if (page !== null && !(Number.isSafeInteger(page) && (page as number) >= 1 && (page as number) <= MAX_PAGE_SIZE))
    bad("page_size_tokens.value", page, `not an integer page size from 1 to ${MAX_PAGE_SIZE} (--page-size's bounds) or null`);
  const capacity = figureValue("capacity_tokens");
  if (capacity !== null && !(Number.isSafeInteger(capacity) && (capacity as number) >= 1 && (capacity as number) <= MAX_CAPACITY_TOKENS))
    bad("capacity_tokens.value", capacity, `not a positive integer of tokens up to ${MAX_CAPACITY_TOKENS} (--max-tokens' bound) or null`);
  const answers = figureValue("outputs_cached");
  if (answers !== null && typeof answers !== "boolean") bad("outputs_cached.value", answers, "neither true, false nor null");
  const insertAt = figureValue("insert_at");
  if (insertAt !== null && insertAt !== "prefill" && insertAt !== "finish") bad("insert_at.value", insertAt, 'neither "prefill", "finish" nor null');
}
