/** Plain-text tables for the console: columns padded to their widest cell, numbers right-aligned. */

export type Align = "left" | "right";

/** Rows of cells under a header, two spaces between columns, no trailing spaces. */
export function renderTextTable(columns: readonly string[], rows: readonly (readonly string[])[], align: readonly Align[] = []): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (align[i] === "right" ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** A number for a table cell: integers as they are, others with `digits` decimals; null or NaN as "n/a". */
export function formatCell(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

/** Whether a cell holds a number (or n/a, -, a signed delta, a percentage): such columns are right-aligned. */
const isNumericCell = (cell: string): boolean => /^(?:[+-]?\d[\d.,]*%?\*?|n\/a|-|[+-]?inf)$/.test(cell);

/** Per column: every cell numeric (and at least one row). */
export const numericColumns = (columns: readonly string[], rows: readonly (readonly string[])[]): boolean[] =>
  columns.map((_, i) => rows.length > 0 && rows.every((r) => isNumericCell(r[i] ?? "")));
