/**
 * The mock's greedy answer with log-probabilities, for the cache-fidelity check: what a request that asks for them
 * (SGLang `return_logprob` + `top_logprobs_num`, OpenAI `logprobs`, llama.cpp `n_probs`) gets back, whole (not
 * streamed). Cold, every position's chosen token is the mock's usual output id with log-probability -0.05; its
 * runner-up (the next id) is 2.95 nats behind, except at every fifth position from the second (1, 6, 11...), where
 * the two are near-tied (0.01 nats apart), as real models have them. Two faults act only on a request whose prompt
 * hit the cache (what a wrong KV or a numerics change on the cached path does):
 * - `--fault-wrong-kv`: from the second token on, the answer is another text (ids shifted by 97) with its own top
 *   list, in which the cold answer's tokens do not appear: a divergence no tie explains;
 * - `--fault-tie-flip`: at the first near-tied position the runner-up wins by 0.01 nats (the rest is unchanged).
 */
import { outputTokenId } from "./output.ts";

interface RankedToken {
  id: number;
  logprob: number;
}

export interface LogprobAnswer {
  ids: number[];
  /** Per position: the chosen token's log-probability. */
  chosen: number[];
  /** Per position: the top `k` tokens, best first (the chosen one among them). */
  top: RankedToken[][];
}

export interface AnswerFaults {
  wrongKv: boolean;
  tieFlip: boolean;
}

const CHOSEN_LOGPROB = -0.05;
const RUNNER_UP_GAP = 2.95;
const TIE_GAP = 0.01;
const WRONG_KV_SHIFT = 97;

/** Whether position i is one of the near-tied ones. */
const isNearTie = (i: number): boolean => i % 5 === 1;

export function logprobAnswer(n: number, vocabSize: number, k: number, hitTokens: number, faults: AnswerFaults): LogprobAnswer {
  const out: LogprobAnswer = { ids: [], chosen: [], top: [] };
  const hit = hitTokens > 0;
  let flipped = false;
  for (let i = 0; i < n; i++) {
    let best = outputTokenId(i, vocabSize);
    if (hit && faults.wrongKv && i >= 1) best = (best + WRONG_KV_SHIFT) % vocabSize;
    let second = (best + 1) % vocabSize;
    const gap = isNearTie(i) ? TIE_GAP : RUNNER_UP_GAP;
    if (hit && faults.tieFlip && !flipped && isNearTie(i)) {
      [best, second] = [second, best];
      flipped = true;
    }
    const ranked: RankedToken[] = [
      { id: best, logprob: CHOSEN_LOGPROB },
      { id: second, logprob: CHOSEN_LOGPROB - gap },
    ];
    for (let j = 2; j < k; j++) ranked.push({ id: (best + 1 + j) % vocabSize, logprob: CHOSEN_LOGPROB - gap - j });
    out.ids.push(best);
    out.chosen.push(CHOSEN_LOGPROB);
    out.top.push(ranked.slice(0, Math.max(k, 1)));
  }
  return out;
}
