/**
 * Every size is bounded before anything is sent. Each numeric flag has a most, here, checked by the one parser of its
 * kind (config/flag-values.ts), so no flag can ask for a run that spins or eats the machine: 0.3 took
 * `--num-clients 100000000000` and grew to 23 GB, and `--total-tokens 2000000000` spun drawing prompts. The run's
 * memory is estimated too (estimateMemory) and refused past half the machine's.
 */
import { totalmem } from "node:os";
import { UsageError } from "../errors.ts";

const DAY_S = 86_400;
const WEEK_S = 7 * DAY_S;

/** The most of each numeric flag, with why: beyond it no run on one client is meaningful. */
export const FLAG_MAXIMA: Readonly<Record<string, { max: number; why: string }>> = {
  "num-prompts": { max: 10_000_000, why: "ten million requests in one line" },
  "total-tokens": { max: 10_000_000, why: "longer than any model's context; 40 MB of token ids a prompt" },
  "output-len": { max: 10_000_000, why: "longer than any model's context" },
  "max-concurrency": { max: 1_000_000, why: "a million requests in flight from one client" },
  "num-clients": { max: 1_000_000, why: "a million conversations from one client" },
  "num-rounds": { max: 100_000, why: "a hundred thousand turns a conversation" },
  "turn-tokens": { max: 10_000_000, why: "longer than any model's context" },
  "first-turn-tokens": { max: 10_000_000, why: "longer than any model's context" },
  "shared-system-tokens": { max: 10_000_000, why: "longer than any model's context" },
  "working-set": { max: 100_000, why: "a hundred thousand shared prefixes in rotation" },
  repeat: { max: 1_000, why: "a thousand flushed, proven and warmed measurements of every line" },
  workers: { max: 1_024, why: "client processes on one machine" },
  "page-size": { max: 1_000_000, why: "tokens per cache page" },
  confirm: { max: 100, why: "agreeing probes a verdict needs" },
  "block-size": { max: 1_000_000, why: "tokens per hash id of a trace" },
  settle: { max: DAY_S, why: "a day" },
  "flush-deadline": { max: DAY_S, why: "a day" },
  "think-time": { max: DAY_S, why: "a day" },
  duration: { max: WEEK_S, why: "a week" },
  "max-tokens": { max: 1_000_000_000, why: "a billion tokens of cache" },
  "idle-wait": { max: DAY_S, why: "a day" },
  "request-timeout": { max: WEEK_S, why: "a week" },
  "stall-timeout": { max: WEEK_S, why: "a week" },
  window: { max: WEEK_S, why: "a week of trace time a window" },
  "time-scale": { max: 1_000_000, why: "a factor on the trace's timestamps" },
};

/** Refuses (exit 2) a value past its flag's most, naming both. */
export function checkBound(flag: string, n: number): void {
  const b = FLAG_MAXIMA[flag];
  if (b !== undefined && n > b.max) throw new UsageError(`--${flag} ${n}: above the most warmbench takes, ${b.max} (${b.why})`);
}

/** The memory a run may plan to hold: half of this machine's. */
export const memoryBudgetBytes = (): number => Math.floor(totalmem() / 2);

const GIB = 1024 ** 3;

/**
 * Refuses (exit 2, before anything is sent) a run whose peak memory would not fit: `bytes` estimated by the memory
 * model (config/memory-model.ts) from the flags named in `because`.
 */
export function checkMemory(bytes: number, because: string): void {
  const budget = memoryBudgetBytes();
  if (bytes > budget) {
    throw new UsageError(
      `${because}: about ${(bytes / GIB).toFixed(1)} GiB at its peak (the memory model, docs/performance.md), over half this machine's memory (${(budget / GIB).toFixed(1)} GiB); ask for less`,
    );
  }
}
