/** The x-request-id of a measured request (--request-details joins on it): unique per run, line and prompt. */

/** A sweep line's request: the line's tag (LinePlan.requestIdTag) and the prompt's index. */
export const requestIdOf = (runId: string, lineTag: string, index: number): string => `${runId}-${lineTag}-${index}`;

/** A multi-turn turn: its client and round. */
export const turnRequestIdOf = (runId: string, client: number, round: number): string => `${runId}-c${client}-r${round}`;

/** The sweep line a details line belongs to: its pct, request rate (Infinity in a closed loop) and id tag. */
export interface DetailLine {
  pct: number;
  rate: number;
  requestIdTag: string;
  /** What the line adds to a request's details (several replicas: where it went and its ledger terms); null: nothing. */
  extra?: (index: number) => Record<string, unknown> | null;
}
