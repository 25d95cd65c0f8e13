/** Flags of the commands that read results files: `report`, `compare`, `merge`, `history` (and run's --history). */
import { COMPARE_DEFAULTS } from "../defaults.ts";
import type { FlagDecl } from "./types.ts";

/** Where `history`, `run --history` and `compare history:...` keep runs without --db. */
export const HISTORY_DB_DEFAULT = "warmbench.db";

export const RESULTS_FLAGS: FlagDecl[] = [
  {
    name: "files",
    type: "positional",
    variadic: true,
    help: "JSONL files written with --output-file (one or more)",
    commands: {
      report: { optional: true, help: "JSONL files written with --output-file (one or more; none needed with --history)" },
      merge: { help: "JSONL files of runs that were not coordinated (two or more)" },
    },
  },
  { name: "base", type: "positional", help: "JSONL results of the baseline", commands: { compare: true } },
  { name: "new", type: "positional", help: "JSONL results to judge against it", commands: { compare: true } },
  { name: "html", type: "string", help: "Write one self-contained HTML report of every run to this file", commands: { report: true } },
  {
    name: "md",
    type: "string",
    help: "Write the report's tables as Markdown to this file (- for stdout)",
    commands: {
      report: true,
      compare: { help: "Also write the comparison as Markdown to this file" },
    },
  },
  {
    name: "max-regress",
    type: "string",
    help: `How much worse NEW may be, per metric, as METRIC=PCT% (percent sign required),...; adds to or overrides the defaults per metric (${COMPARE_DEFAULTS.maxRegress})`,
    commands: { compare: true },
    // Given twice, each adds its limits (a metric named in both is refused), instead of the last one silently winning.
    repeatable: true,
  },
  {
    name: "only",
    type: "string",
    help: "Judge and show only these metrics (METRIC,...), each at its limit from the defaults or --max-regress",
    commands: { compare: true },
  },
  { name: "force", type: "boolean", help: "Compare lines whose workload fingerprints differ (marked in the output)", commands: { compare: true } },
  {
    name: "allow-missing",
    type: "boolean",
    help: "Accept lines of BASE that NEW lacks (said in the output) instead of failing with exit 7",
    commands: { compare: true },
  },
  { name: "output-file", type: "string", help: "Where the merged JSONL goes (-o works too), as every command's --output-file", commands: { merge: true } },
  {
    name: "allow-copy",
    type: "boolean",
    help: "Merge a run whose measurements equal another input's under a new run id (a copy: its requests would count twice); refused (exit 2) without it",
    commands: { merge: true },
  },
  {
    name: "allow-inconclusive",
    type: "boolean",
    help: "Exit 0 instead of 8 when a repeated line's 95 % interval straddles a limit (inconclusive; said in the output)",
    commands: { compare: true },
  },
  {
    name: "action",
    type: "positional",
    variadic: true,
    help: "add FILES..., list (each run's status as a baseline, and why), show [METRIC] (a trend table), or promote RUN_ID (accept a run as a baseline on purpose)",
    commands: { history: true },
  },
  {
    name: "db",
    type: "string",
    default: `./${HISTORY_DB_DEFAULT}`,
    help: "The history database (SQLite; created by add)",
    commands: {
      history: true,
      run: { help: "The history database of --history (SQLite)" },
      compare: { help: "The history database that a BASE of history:last-green, history:TAG or history:RUN_ID is read from" },
      report: { help: "The history database that --history reads (SQLite; never written)" },
    },
  },
  {
    name: "tag",
    type: "string",
    help: "add: a tag for the runs (e.g. a release); list, show: only runs with this tag",
    commands: {
      history: true,
      report: { help: "--history: only the stored runs with this tag" },
    },
  },
  { name: "pct", type: "string", help: "show: only the lines at this shared-prefix pct", commands: { history: true } },
  {
    name: "history",
    type: "boolean",
    help: "Add the run to the history database (--db) when it ends; an interrupted run adds nothing",
    commands: {
      run: true,
      report: { help: "Chart each key metric per line across the runs of the history database (--db), oldest first; FILES are the newest points (not stored)" },
    },
  },
];
