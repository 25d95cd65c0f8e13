/**
 * What the engine needs of a run to measure its points: its options, control calls and backend, the server (and
 * with several replicas, each one), the tokenizer, and the interrupt. Settled once when the session opens.
 */
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import type { DeclaredRunFields, RunOptions } from "../config/options.ts";
import type { ReplicaSet } from "./replica-set.ts";
import type { ResetContext } from "./reset-cache.ts";

export interface PointContext extends ResetContext {
  opts: ResetContext["opts"] &
    Pick<
      RunOptions,
      | "baseUrl"
      | "serverCache"
      | "passport"
      | "replicas"
      | "fidelity"
      | "extraRequestBody"
      | "flushDeadlineS"
      | "flushServerTimeoutS"
      | "requestTimeoutS"
      | "seed"
    > &
    Partial<Pick<RunOptions, "gates">> &
    // Every declared flag's field reaches the studies without naming it here (absent in a context built by hand, or
    // in a command that does not take the flag).
    Partial<DeclaredRunFields>;
  backend: Backend;
  ctl: Control;
  server: ServerProfile;
  /** Several replicas (--base-url A,B,...): each one's control calls and preflight; the first is `ctl` and `server`. */
  replicas?: ReplicaSet;
}
