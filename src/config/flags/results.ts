/** Flags of the commands that read results files: `report`, `compare`, `merge`. */
import { COMPARE_DEFAULTS } from "../options.ts";
import type { FlagDecl } from "./types.ts";

export const RESULTS_FLAGS: FlagDecl[] = [
  { name: "files", type: "positional", variadic: true, help: "JSONL files written with --output-file (one or more)", commands: {
    report: true,
    merge: { help: "JSONL files of runs that were not coordinated (two or more)" },
  } },
  { name: "base", type: "positional", help: "JSONL results of the baseline", commands: { compare: true } },
  { name: "new", type: "positional", help: "JSONL results to judge against it", commands: { compare: true } },
  { name: "html", type: "string", help: "Write one self-contained HTML report of every run to this file", commands: { report: true } },
  { name: "md", type: "string", help: "Write the report's tables as Markdown to this file (- for stdout)", commands: {
    report: true,
    compare: { help: "Also write the comparison as Markdown to this file" },
  } },
  { name: "max-regress", type: "string", default: COMPARE_DEFAULTS.maxRegress, help: "How much worse NEW may be, per metric, as METRIC=PCT%,...; replaces the defaults", commands: { compare: true } },
  { name: "force", type: "boolean", help: "Compare lines whose workload fingerprints differ (marked in the output)", commands: { compare: true } },
  { name: "allow-missing", type: "boolean", help: "Accept lines of BASE that NEW lacks (said in the output) instead of failing with exit 7", commands: { compare: true } },
  { name: "output", type: "string", help: "Where the merged JSONL goes (-o)", commands: { merge: true } },
];
