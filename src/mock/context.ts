/** Everything the mock's request handlers share: one object built by server.ts. */
import type { FaultPlan } from "./faults.ts";
import type { MockMetrics } from "./metrics.ts";
import type { MockOptions } from "./options.ts";
import type { MockTokenizer } from "./chat-template.ts";
import type { SlotCache } from "./slot-cache.ts";
import type { TieredCache } from "./tiered-cache.ts";
import type { MockScheduler } from "./scheduler.ts";
import type { TruthLog } from "./truth.ts";
import type { MockCounters } from "./types.ts";

/** Shared state of a running mock server. */
export interface MockContext {
  opts: MockOptions;
  scheduler: MockScheduler;
  cache: TieredCache;
  /** llama.cpp's per-slot caches (the llamacpp personality); null otherwise. */
  slots: SlotCache | null;
  /** Chat messages -> ids. */
  tokenizer: MockTokenizer;
  counters: MockCounters;
  faults: FaultPlan;
  metrics: MockMetrics;
  /** The ground-truth log, or null without --truth. */
  truth: TruthLog | null;
  /** rids of /generate requests still running: SGLang rejects a duplicate. */
  liveRids: Set<string>;
  /** Longest prompt the scheduler takes (SGLang: min(context_len, max_total_num_tokens) - 1). */
  maxReqInputLen: number;
  /** True while a flush is waiting for idle. */
  flushInProgress: boolean;
  /** Kill the server at once (--exit-after): every socket destroyed, the listener closed. */
  die(): void;
}
