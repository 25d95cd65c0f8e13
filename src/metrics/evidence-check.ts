/**
 * THE evidence check: whether a line (and a metric of it) can be judged, asked by every verdict — gates, capacity
 * probes, compare, history's baselines, merge, the report. Each verdict path fails on the defects its row of
 * EVIDENCE_POLICY marks; a cell it does not fail on says why (docs/reference/evidence-matrix.md is generated from it).
 * It reads the line's `evidence` block (metrics/evidence.ts) and, for lines written before it existed, the keys that
 * carried the same facts.
 */
import type { LineEvidence } from "../schema/nested.ts";
import { MUST_NOT_GROW_KEYS, sampleFamilyOf, type SampleFamily } from "../schema/key-table.ts";

/** Every way evidence can be missing or wrong: the matrix's columns. */
export const DEFECTS = [
  "no_samples",
  "interrupted",
  "load_not_sustained",
  "line_missing",
  "more_failures",
  "cache_unproven",
  "client_saturated",
  "same_run_twice",
  "metric_absent",
  "definition_mismatch",
  "baseline_not_accepted",
] as const;
export type Defect = (typeof DEFECTS)[number];

/** Every verdict: the matrix's rows. */
export const VERDICT_PATHS = ["gate", "capacity_probe", "require", "compare", "history_baseline", "merge", "replay_check", "report"] as const;
export type VerdictPath = (typeof VERDICT_PATHS)[number];

export interface Problem {
  defect: Defect;
  /** One line: what is missing, where. */
  text: string;
}

/** A cell: the verdict fails on the defect (with the test that proves it), or does not apply (with why). */
export type Cell = { fails: true; test: string } | { fails: false; na: string };

const fails = (test: string): Cell => ({ fails: true, test });
const na = (why: string): Cell => ({ fails: false, na: why });

/**
 * What each verdict does with each defect. A test name is the exact name of a test in test/ that fails without the
 * check (test/unit/docs/evidence-matrix.test.ts finds each).
 */
export const EVIDENCE_POLICY: Record<VerdictPath, Record<Defect, Cell>> = {
  gate: {
    no_samples: fails("a gate on ITL fails when the server stopped after one token (no ITL sample)"),
    interrupted: fails("a gate fails on an interrupted line, whatever its value"),
    load_not_sustained: fails("a gate fails on a line whose offered rate the client could not send"),
    line_missing: na("a gate whose scope matches no planned line is refused before anything is sent (exit 2)"),
    more_failures: na("failed is a metric: gate it (failed==0); one run has no earlier count to grow from"),
    cache_unproven: na("--verify-cache strict fails the run (exit 4); without it a mismatch is what a working-set study measures"),
    client_saturated: na("a saturated client only makes latencies worse, so a gate that holds holds a fortiori; --strict fails the run (exit 5)"),
    same_run_twice: na("a gate judges lines of one run as they are measured"),
    metric_absent: fails("a gate on a key the planned lines lack is refused"),
    definition_mismatch: na("a gate reads the value written in the line it judges, the numpy definition"),
    baseline_not_accepted: na("a gate has no baseline"),
  },
  capacity_probe: {
    no_samples: fails("a capacity probe with no sample for its gate's metric fails"),
    interrupted: na("an interrupted probe ends the search: capacity_status interrupted, and no capacity is reported"),
    load_not_sustained: fails("a 3-slot server behind --max-concurrency 3: the search lands near what it carried, not at the bracket's top"),
    line_missing: na("a probe is measured where the search places it; an interrupted search says so (capacity_status interrupted)"),
    more_failures: na("failed==0 is one of the probe's gates when the user gives it"),
    cache_unproven: na("a probe whose cache check failed does not vote and is measured again (capacity_status cache_unproven after two)"),
    client_saturated: na("a saturated client only makes latencies worse: a probe that passes passes a fortiori"),
    same_run_twice: na("a search is one run"),
    metric_absent: fails("a gate on a key the planned lines lack is refused"),
    definition_mismatch: na("a probe's gates read its own line's values"),
    baseline_not_accepted: na("a probe has no baseline"),
  },
  require: {
    no_samples: na("--require judges the capacity a search found, and a probe without samples for its gate's metric never passes (capacity_probe row)"),
    interrupted: na("an interrupted search exits 130 before any requirement is judged"),
    load_not_sustained: fails("a 3-slot server behind --max-concurrency 3: the search lands near what it carried, not at the bracket's top"),
    line_missing: na("each pct's search writes its capacity line; one missing (a failing server) exits 1"),
    more_failures: na("failed==0 is a probe gate when the user gives it"),
    cache_unproven: na("a pct whose cache was never proven has no capacity and exits 4 before requirements"),
    client_saturated: na("judged per probe: a saturated client only makes latencies worse"),
    same_run_twice: na("a search is one run"),
    metric_absent: na("--require names a load, not a metric"),
    definition_mismatch: na("the capacity is the highest passing probe's own load"),
    baseline_not_accepted: na("--require has no baseline"),
  },
  compare: {
    no_samples: fails("compare fails a limited metric with no sample in NEW"),
    interrupted: fails("compare fails an interrupted NEW"),
    load_not_sustained: fails("compare fails a NEW line whose offered load was not sustained"),
    line_missing: fails("a NEW missing a BASE line (a candidate that stopped before 80 %) exits 7 naming it"),
    more_failures: fails("a NEW with more failed requests exits 7 naming the line and both counts"),
    cache_unproven: fails("a NEW whose flush was not proven exits 7: flush_verified and cache_check lost"),
    client_saturated: fails("a NEW line whose client saturated is untrustworthy, not slower: exit 7"),
    same_run_twice: fails("compare refuses the same run on both sides"),
    metric_absent: fails("a limit on a metric neither file has is exit 2"),
    definition_mismatch: na("compare reads every latency percentile from the HDR histograms on both sides, one definition"),
    baseline_not_accepted: fails("history:last-green skips a candidate that compare found regressed"),
  },
  history_baseline: {
    no_samples: na("a run's gates judge its samples when it is added; a run without gates bootstraps only as the first of its workload"),
    interrupted: fails("history never accepts an interrupted run as a baseline"),
    load_not_sustained: fails("history never accepts a run whose load was not sustained"),
    line_missing: na("decided by compare against the baseline (its row): history records the verdict, exit 7 rejects the candidate"),
    more_failures: na("decided by compare against the baseline (its row): history records the verdict, exit 7 rejects the candidate"),
    cache_unproven: na("decided by compare against the baseline (its row): a proof the baseline had and the candidate lost rejects it"),
    client_saturated: na("decided by compare against the baseline (its row): a saturated candidate is untrustworthy there, exit 7 rejects it"),
    same_run_twice: na("a run id is stored once (history add of the same run is refused)"),
    metric_absent: na("judged by compare against the baseline (its metric_absent cell)"),
    definition_mismatch: na("judged by compare against the baseline"),
    baseline_not_accepted: fails("history:last-green skips a candidate that compare found regressed"),
  },
  merge: {
    no_samples: na("merge sums the sample counts; a merged metric with no sample is null"),
    interrupted: na("an interrupted input keeps interrupted: true in the merged line, and every verdict on it fails"),
    load_not_sustained: na("an input's unsustained load keeps sustained false in the merged line, and every verdict on it fails"),
    line_missing: na("merge unites the lines the files hold, each cell from the files that have it"),
    more_failures: na("failed is summed"),
    cache_unproven: na("the merged line keeps the weakest proof of its inputs"),
    client_saturated: na("the merged line is saturated when an input was"),
    same_run_twice: fails("merge refuses a run it already holds, directly or inside an earlier merge"),
    metric_absent: na("merge unites what the inputs have"),
    definition_mismatch: na("merged percentiles from histograms are listed in merged.histogram_derived"),
    baseline_not_accepted: na("merge has no baseline"),
  },
  replay_check: {
    no_samples: na("requests that report no cached tokens make the check unreported, which --verify-cache strict fails (exit 4)"),
    interrupted: fails("writes the windows measured so far, interrupted, and exits 130"),
    load_not_sustained: na("the replay checks the cache each request found; its lines carry load.sustained for the gates and compare that judge them"),
    line_missing: na("every window with a request gets a line, and the whole replay one"),
    more_failures: na("failed requests are left out of the cache check and counted in failed"),
    cache_unproven: na("this is the cache check itself: --verify-cache strict fails it (exit 4)"),
    client_saturated: na("--strict fails a saturated replay (exit 5)"),
    same_run_twice: na("a replay is one run"),
    metric_absent: na("the check reads each request's reported cached tokens"),
    definition_mismatch: na("one predictor defines every request's expected range"),
    baseline_not_accepted: na("the check has no baseline"),
  },
  report: {
    no_samples: na("the report prints n/a for a null metric"),
    interrupted: na("the report marks the line interrupted"),
    load_not_sustained: na("the report draws what was measured; verdicts are the gates' and compare's"),
    line_missing: na("the report draws the lines the files hold"),
    more_failures: na("the report prints failed"),
    cache_unproven: na("the report prints the cache verdict"),
    client_saturated: na("the report marks a saturated client"),
    same_run_twice: na("the report reads files as they are; merge refuses duplicates"),
    metric_absent: na("the report shows the keys the files have"),
    definition_mismatch: na("the report prints the line's own values"),
    baseline_not_accepted: na("the report has no baseline"),
  },
};

const rec = (line: object): Record<string, unknown> => line as Record<string, unknown>;
export const evidenceOf = (line: object): LineEvidence | null => {
  const e = rec(line).evidence;
  return typeof e === "object" && e !== null ? (e as LineEvidence) : null;
};

const FAMILY_WORDS: Record<SampleFamily, string> = {
  ttft: "TTFT",
  tpot: "TPOT (a request with more than one output token)",
  itl: "ITL",
  e2e: "E2E latency",
  from_intended: "latency-from-intended",
  schedule_lag: "schedule-lag",
  finished: "completed-request",
  fidelity: "compared-answer (--check-fidelity)",
  ledger: "ledger-request (several replicas)",
  telemetry: "server-scrape (--scrape-interval)",
};

/**
 * A metric a verdict reads: a key of the line (`keyMetric`), or a figure a verdict computes from the line (compare's
 * percentiles read from the HDR histograms), with the evidence count it rests on (the key table's `samples`).
 */
export interface JudgedMetric {
  name: string;
  samples: SampleFamily | null;
  /** Its value in the line; undefined: the line has no such metric at all. */
  value(line: object): unknown;
}

/** A key of the line, its samples from the key table. */
const keyMetric = (name: string): JudgedMetric => ({ name, samples: sampleFamilyOf(name), value: (line) => rec(line)[name] });

/** What a metric of the line lacks: the key is absent, null (unmeasured) or was computed from no sample. */
function metricProblems(line: object, metric: string | JudgedMetric): Problem[] {
  const m = typeof metric === "string" ? keyMetric(metric) : metric;
  const v = m.value(line);
  if (v === undefined) return [{ defect: "metric_absent", text: `metric_absent: the line has no ${m.name}` }];
  const family = m.samples;
  const e = evidenceOf(line);
  const n = family === null || e === null ? null : family === "finished" ? e.requests.finished : e.samples[family];
  if (n === 0 || v === null || (typeof v === "number" && Number.isNaN(v))) {
    const what = family === null ? "value" : `${FAMILY_WORDS[family]} sample`;
    return [{ defect: "no_samples", text: `no_samples: ${m.name} has no ${what}` }];
  }
  return [];
}

/** What the line as a whole lacks, whatever the metric. */
function lineProblems(line: object): Problem[] {
  const l = rec(line);
  const e = evidenceOf(line);
  const out: Problem[] = [];
  if (l.interrupted === true) out.push({ defect: "interrupted", text: "interrupted: the run was stopped while the line was measured" });
  else if (e !== null && !e.complete) {
    out.push({ defect: "interrupted", text: `interrupted: ${e.requests.sent} of ${e.requests.planned} planned requests were sent` });
  }
  if (e !== null && e.load.sustained === false) {
    const l2 = e.load;
    const what =
      l2.offered_request_rate !== null
        ? `offered ${fmt(l2.offered_request_rate)} req/s, sent at ${l2.achieved_request_rate === null ? "n/a" : fmt(l2.achieved_request_rate)} req/s`
        : `offered ${l2.offered_concurrency} in flight, at most ${l2.achieved_concurrency} were`;
    out.push({ defect: "load_not_sustained", text: `load_not_sustained: ${what}` });
  }
  const flushed = l.flush_verified === false || e?.cache.flush_proven === false;
  if (flushed) out.push({ defect: "cache_unproven", text: "cache_unproven: the flush was not proven (a probe found the cache still holding)" });
  if (l.cache_check === "mismatch") out.push({ defect: "cache_unproven", text: "cache_unproven: the cached tokens disagreed with the expected prefix" });
  if (l.client_saturated === true) out.push({ defect: "client_saturated", text: "client_saturated: the client itself was the bottleneck" });
  return out;
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/**
 * THE question every verdict asks: the problems with judging `line` (on `metric`, when the verdict reads one) that
 * `path` fails on. Empty: the line is evidence for the verdict.
 */
export function judgeEvidence(path: VerdictPath, line: object, metric?: string): Problem[] {
  const policy = EVIDENCE_POLICY[path];
  const found = [...lineProblems(line), ...(metric === undefined ? [] : metricProblems(line, metric))];
  return found.filter((p) => policy[p.defect].fails);
}

/**
 * What a candidate line (NEW) lacks against its baseline line (BASE), for compare and for history's acceptance:
 * NEW's own defects (interrupted, a load not carried, a saturated client), what it lost that BASE had (failed
 * requests grew, a cache or flush proof gone), a BASE that was interrupted or did not carry its load, and, for each
 * judged metric, no sample in NEW (`named`: the user asked for it, so it must rest on samples on both sides; a default
 * limit on a metric neither side has is skipped).
 */
export function pairProblems(base: object, next: object, metrics: readonly { metric: JudgedMetric; named: boolean }[]): Problem[] {
  const b = rec(base);
  const n = rec(next);
  const out = lineProblems(next).filter((p) => p.defect !== "cache_unproven");
  // A baseline is evidence too: one interrupted, or that did not carry its load, proves nothing about NEW.
  for (const p of lineProblems(base)) {
    if (p.defect === "interrupted" || p.defect === "load_not_sustained") out.push({ ...p, text: `${p.text} in BASE` });
  }
  // Counts of things gone wrong (the key table's mustNotGrow: failed requests, diverged answers) may not grow, and a
  // count resting on a check of its own (fidelity_diverged on compared answers) may not stop resting on it: a NEW that
  // compared nothing, or dropped the check, has diverged nowhere only because it never looked.
  for (const key of MUST_NOT_GROW_KEYS) {
    const family = sampleFamilyOf(key);
    if (family !== null && family !== "finished") {
      const inBase = evidenceOf(base)?.samples[family] ?? 0;
      const inNew = evidenceOf(next)?.samples[family] ?? 0;
      if (inBase > 0 && inNew === 0)
        out.push({
          defect: "no_samples",
          text: `no_samples: ${key} rests on ${inBase} samples in BASE, none in NEW (its check was dropped or compared nothing)`,
        });
    }
    const inBase = typeof b[key] === "number" ? (b[key] as number) : 0;
    if (typeof n[key] === "number" && (n[key] as number) > inBase) {
      const what = key === "failed" ? "" : `${key} `;
      out.push({
        defect: "more_failures",
        text: `more_failures: ${what}${typeof b[key] === "number" ? b[key] : "n/a"} in BASE, ${n[key]} in NEW (any increase fails)`,
      });
    }
  }
  if (b.cache_check === "ok" && n.cache_check !== "ok") {
    out.push({
      defect: "cache_unproven",
      text: `cache_unproven: cache_check ok in BASE, ${String(n.cache_check ?? "absent")} in NEW (the cache was no longer proven)`,
    });
  }
  if (b.flush_verified === true && n.flush_verified !== true) {
    out.push({
      defect: "cache_unproven",
      text: `cache_unproven: flush_verified true in BASE, ${n.flush_verified === undefined ? "absent" : String(n.flush_verified)} in NEW (the flush was not proven)`,
    });
  }
  for (const m of metrics) {
    const inNew = metricProblems(next, m.metric);
    if (inNew.length === 0) continue;
    const inBase = metricProblems(base, m.metric);
    if (inBase.length > 0 && !m.named) continue;
    out.push(...inNew.map((p) => ({ ...p, text: `${p.text} in NEW` })));
  }
  // A metric the user named must rest on samples in BASE too: a delta from nothing is no verdict.
  for (const m of metrics.filter((x) => x.named)) out.push(...metricProblems(base, m.metric).map((p) => ({ ...p, text: `${p.text} in BASE` })));
  return out.filter((p) => EVIDENCE_POLICY.compare[p.defect].fails);
}

/** The run ids a line measured: its evidence's, a merged line's inputs', else its own run_id. */
export function runIdsOf(line: object): string[] {
  const e = evidenceOf(line);
  if (e !== null && e.run_ids.length > 0) return e.run_ids;
  const merged = rec(line).merged as { run_ids?: (string | null)[] } | undefined;
  if (merged?.run_ids) return merged.run_ids.filter((r): r is string => typeof r === "string");
  return typeof rec(line).run_id === "string" ? [rec(line).run_id as string] : [];
}

/** A run id found more than once among the inputs' runs (each input: the runs it holds), or null. */
export function repeatedRun(inputs: readonly (readonly string[])[]): string | null {
  const seen = new Set<string>();
  for (const runs of inputs) {
    for (const id of new Set(runs)) {
      if (seen.has(id)) return id;
      seen.add(id);
    }
  }
  return null;
}
