/**
 * Does erasing every slot make this llama-server cold? Not when its host-RAM prompt cache is on (`--cache-ram`,
 * 8192 MiB by default): a slot's prompt that another prompt displaced is kept in host RAM, survives the erase, and
 * is loaded back into a slot for the next prompt that shares its prefix. Neither /props nor /slots says whether
 * that cache is on (llama.cpp v0.5.0 exposes no `cache_ram` anywhere), so this asks the server by behaviour:
 *
 *   erase all; X pinned to slot 0; Y pinned to slot 0 (X is displaced: saved to RAM if the cache is on);
 *   erase all; X again, unpinned (an erased slot is taken by LRU, which loads the best RAM match); erase all.
 *
 * X coming back with cached tokens proves the RAM cache. Three one-token requests of 64 tokens each, before the
 * first pct, and the server is left with every slot empty.
 */
import { eraseAllSlots, shortCompletion } from "./llamacpp-slots.ts";
import type { Control } from "./http.ts";

const CHECK_TOKENS = 64;

/** Why the flush cannot make this server cold (one line for the user), or null when X came back cold. */
export async function findRamCache(ctl: Control, model: string | null, vocabSize: number): Promise<string | null> {
  const x = checkIds(vocabSize, 1);
  const y = checkIds(vocabSize, 2);
  await eraseAllSlots(ctl);
  await shortCompletion(ctl, { ids: x, model, slot: 0 });
  await shortCompletion(ctl, { ids: y, model, slot: 0 });
  await eraseAllSlots(ctl);
  const cached = await shortCompletion(ctl, { ids: x, model, slot: null });
  await eraseAllSlots(ctl);
  if (cached <= 0) return null;
  return (
    `after every slot was erased, a prompt the server had seen came back with ${cached} of ${x.length} tokens cached: ` +
    "its host-RAM prompt cache (--cache-ram, 8192 MiB by default) keeps prompts that an erase does not reach; " +
    "start llama-server with --cache-ram 0"
  );
}

/**
 * 64 ids from the middle half of the vocabulary (ordinary tokens in every vocabulary: special tokens sit at either
 * end), different for each `seed`, and unlike anything a sweep draws from its own RNG.
 */
export function checkIds(vocabSize: number, seed: number): number[] {
  const low = Math.floor(vocabSize / 4);
  const span = Math.max(1, Math.floor(vocabSize / 2));
  const ids: number[] = [];
  let state = (0x9e3779b9 * seed) >>> 0;
  for (let i = 0; i < CHECK_TOKENS; i++) {
    // xorshift32: enough to make the two sequences share no prefix.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    ids.push(low + (state % span));
  }
  return ids;
}
