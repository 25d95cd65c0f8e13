/**
 * `warmbench merge A.jsonl B.jsonl ... -o M.jsonl`: one result from runs that were not coordinated (several clients
 * started by hand against one server), whatever the runs measured: sweep lines are paired by (pct, working set, rate),
 * multi-turn round lines by round, in order. One code path for any point: every key the kind carries is merged by
 * its rule in merge-rules.ts. Counts and token totals add up, throughputs are taken over the union of the runs'
 * windows, means and standard deviations are exact (weighted from each line's counts); medians and percentiles come
 * from the merged HDR histograms, so they hold to the histograms' 3 significant digits and are listed under
 * `merged.histogram_derived`.
 */
import { UsageError } from "../errors.ts";
import { axesOf, isSearchStep, kindOf } from "../schema/axes.ts";
import { KEYS_OF, orderLine, type Point } from "../schema/lines.ts";
import { repeatedRun, runIdsOf } from "../metrics/evidence-check.ts";
import { checkSameWork } from "./merge-agree.ts";
import { exactStats, lineSamples, type DetailSample } from "./merge-details.ts";
import { measuredFingerprint } from "../metrics/fingerprint.ts";
import { mergingOf, RULES, type MergeLine } from "./merge-rules.ts";

/** A results file's runs (each the lines of one run, of either kind), with its name for messages. */
export interface NamedRuns {
  name: string;
  runs: readonly (readonly MergeLine[])[];
  /** The run's --request-details file, read: the union's statistics are then exact; null or absent: from histograms. */
  details?: { file: string; samples: readonly DetailSample[] } | null;
}

const kindName = (line: MergeLine) => (kindOf(axesOf(line)) === "round" ? "round" : "sweep");

/** One merged line per line of the first file; every file must have the same points (the same axes) in the same order. */
export function mergeResults(files: NamedRuns[], opts: { allowCopy?: boolean } = {}): Point[] {
  if (files.length < 2) throw new UsageError("merge: expects at least two results files");
  const names = files.map((f) => f.name);
  const lineLists = files.map((f) => {
    if (f.runs.length !== 1) throw new UsageError(`merge: ${f.name} holds ${f.runs.length} runs; merge files of one run each`);
    const lines = f.runs[0]!;
    for (const l of lines) {
      // Each search chose its own loads, in its own order: its probes are no points to pair, its verdict no sum.
      if (isSearchStep(l)) {
        throw new UsageError(
          `merge: ${f.name} holds a capacity search (warmbench capacity), which is not mergeable: each search chose its own loads; compare searches with warmbench compare, or run one search from one client`,
        );
      }
      if (typeof l.hdr !== "object" || l.hdr === null) throw new UsageError(`merge: ${f.name} has lines without HDR histograms (not written by warmbench)`);
    }
    return lines;
  });
  // The evidence check's same_run_twice: a run counted twice doubles its requests and its throughput.
  const runsOfFile = lineLists.map((lines) => [...new Set(lines.flatMap((l) => runIdsOf(l)))]);
  const twice = repeatedRun(runsOfFile);
  if (twice !== null) {
    const where = runsOfFile.flatMap((runs, k) => (runs.includes(twice) ? [names[k]] : []));
    throw new UsageError(
      `merge: run ${twice} would be counted twice (it is in ${where.join(" and ")}${where.length === 1 ? " twice" : ""}); merge each run once`,
    );
  }
  const kinds = lineLists.map((lines) => kindName(lines[0]!));
  const other = kinds.findIndex((k) => k !== kinds[0]);
  if (other > 0) throw new UsageError(`merge: ${names[other]} holds ${kinds[other]} lines, ${names[0]} ${kinds[0]} lines: merge runs of one command`);
  const n = lineLists[0]!.length;
  const what = kinds[0] === "round" ? "round" : "pct";
  lineLists.forEach((lines, k) => {
    if (lines.length !== n) throw new UsageError(`merge: ${names[k]} has ${lines.length} ${what} lines, ${names[0]} has ${n}`);
  });
  const out: Point[] = [];
  for (let i = 0; i < n; i++) {
    const group = lineLists.map((lines) => lines[i]!);
    checkSameWork(group, i + 1, names);
    out.push(
      mergeGroup(
        group,
        names,
        files.map((f) => f.details ?? null),
      ),
    );
  }
  // After the checks of what the lines hold: a file that cannot be merged at all says why first.
  if (opts.allowCopy !== true) refuseCopies(lineLists, names, runsOfFile);
  return out;
}

/**
 * A run whose measurements equal another input's, line for line, is one measurement under two run ids (a file
 * copied and its run id edited): merged, its requests would count twice. Refused unless --allow-copy.
 */
function refuseCopies(lineLists: readonly (readonly MergeLine[])[], names: readonly string[], runs: readonly (readonly string[])[]): void {
  const seen = new Map<string, number>();
  lineLists.forEach((lines, k) => {
    const print = lines.map(measuredFingerprint).join("+");
    const earlier = seen.get(print);
    if (earlier !== undefined) {
      throw new UsageError(
        `merge: ${names[k]} (run ${runs[k]!.join("+") || "none"}) measured exactly what ${names[earlier]} (run ${runs[earlier]!.join("+") || "none"}) did, line for line: ` +
          "a copy under a new run id would count its requests twice (--allow-copy merges it anyway)",
      );
    }
    seen.set(print, k);
  });
}

/** The lines of one point, one per file, as one line of their kind: each key by its rule, in the kind's order. */
function mergeGroup(lines: readonly MergeLine[], files: string[], details: readonly ({ file: string; samples: readonly DetailSample[] } | null)[]): Point {
  const samples = lineSamples(
    lines as Parameters<typeof lineSamples>[0],
    details.map((d) => d?.samples ?? null),
  );
  const exact = exactStats(samples);
  const m = mergingOf(lines, files, kindName(lines[0]!), exact === null ? null : { stats: exact, files: details.map((d) => d!.file) }, samples);
  const fields: Record<string, unknown> = {};
  for (const key of KEYS_OF[m.kind]) if (key !== "run" && key !== "schema_version") fields[key] = RULES[key](m);
  return orderLine(m.kind, fields) as Point;
}
