/**
 * A study: what the engine adds to every point after its measurement and before its line is built - the
 * cache-fidelity check, the hit-loss ledger, and whatever comes next - as one object registered once
 * (studies/registered-studies.ts). It reads the measured point, may send requests of its own (none measured), and gives
 * the line a group of keys, the count of samples its keys rest on (the evidence block's `samples`), and what each
 * request's details add. No producer names a study: a producer only says, in its plan, what a study reads of it.
 */
import type { MeasuredPoint, PointPlan, StudyKeys, StudyOutcome, StudyResult } from "./point-plan.ts";
import type { PointContext } from "./point-context.ts";
import type { PointMoments } from "./point-moments.ts";

/**
 * What a study watches while a point runs (a scraper on its own timer), stopped once the point's requests are done,
 * on every path; the engine tells it the point's moments (point-moments.ts).
 */
export interface StudyWatch extends PointMoments {
  stop(): Promise<void> | void;
}

export interface Study {
  name: string;
  /**
   * Before the point's reset (a round's: as its first turn goes): start watching it, `label` its progress label
   * (absent, or undefined: nothing to watch).
   */
  begin?(ctx: PointContext, label: string): StudyWatch | undefined;
  /** Null: the study has nothing to say of this point (not asked for, or the point gives it nothing to read). */
  after(point: MeasuredPoint, ctx: PointContext, plan: PointPlan<unknown>, watch?: StudyWatch): Promise<StudyOutcome | null> | StudyOutcome | null;
}

/** The studies' keys, a group of the line each (the builder refuses a key two groups give). */
export function studyGroups(studies: readonly StudyResult[]): Record<string, StudyKeys> {
  return Object.fromEntries(studies.map((s) => [s.name, s.keys]));
}

/** The samples the studies' keys rest on, for the evidence block. */
export function studySamples(studies: readonly StudyResult[]): Record<string, number> {
  return Object.assign({}, ...studies.map((s) => s.samples));
}
