/**
 * `--passport FILE`: a passport `warmbench passport --output-file` wrote, read before anything is sent. Only its
 * measured figures are taken (a figure not measured is none); a file that is no passport is exit 2 naming it.
 */
import { existsSync, readFileSync } from "node:fs";
import { UsageError } from "../errors.ts";
import type { RunOptions } from "../config/options.ts";
import { PASSPORT_KIND, type Passport } from "../schema/passport.ts";
import { str, type RawFlags } from "../config/flag-values.ts";

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
  const figure = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null);
  // A capacity that is only a lower bound is not the capacity.
  const bounded = p.capacity_tokens?.uncertainty?.startsWith("a lower bound") === true;
  const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
  return {
    passport: {
      file,
      pageSize: figure(p.page_size_tokens?.value),
      capacityTokens: bounded ? null : figure(p.capacity_tokens?.value),
      engine: text(p.engine),
      serverVersion: text(p.server_version),
      baseUrl: text(p.base_url),
    },
  };
}
