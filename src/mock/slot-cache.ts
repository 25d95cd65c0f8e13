/**
 * llama.cpp's prompt cache, as llama-server v0.5.0 keeps it (docs/llamacpp.md, server-context.cpp
 * get_available_slot): one cache per slot, token-granular, and optionally the host-RAM prompt cache (--cache-ram).
 *
 * - A request pinned to a slot (id_slot, wrapping modulo the slot count) waits for that slot. Otherwise it takes
 *   the idle slot whose tokens share the longest prefix with it, if that is more than 10% of the prompt, else the
 *   least recently used idle slot.
 * - It reuses the common prefix with that slot's tokens only, at most prompt - 1 (the last token is always
 *   computed); cache_prompt false reuses nothing.
 * - With the RAM cache on: when a slot is taken by LRU, or would keep less than half of its tokens, its state is
 *   saved to RAM and the best-matching saved state (sharing at least a quarter of itself) is moved into the slot;
 *   every idle slot is also saved when a task starts. A pinned request on an empty slot loads nothing (llama.cpp's
 *   0/0 keep ratio). An erase clears the slot only, never RAM.
 */
import type { CacheClaim, CachePolicy, CacheRequest } from "./cache-policy.ts";
import { MOCK_DEFAULTS } from "./options.ts";
import { outputTokenId } from "./output.ts";

interface Slot {
  id: number;
  /** Prompt ids, then the generated ids but the last (what llama.cpp holds after a request). */
  tokens: number[];
  busy: boolean;
  lastUsedTick: number;
}

/** llama.cpp's --slot-prompt-similarity default. */
const SIMILARITY = 0.1;
/** Saved RAM states a slot may load only when they share at least this much of themselves. */
const RAM_MIN_KEEP = 0.25;

export class SlotCache implements CachePolicy {
  private readonly slots: Slot[];
  /** The host-RAM prompt cache; null when off (--cache-ram 0). */
  private readonly ram: number[][] | null;
  private tick = 0;
  /** Erases waiting for a busy slot to finish. */
  private readonly eraseWaiters = new Map<number, Array<() => void>>();

  /** `vocabSize` settles the mock's output ids, which a slot keeps after its prompt as llama.cpp does. */
  constructor(
    slotCount: number,
    ramCache: boolean,
    private readonly vocabSize: number = MOCK_DEFAULTS.vocabSize,
  ) {
    this.slots = Array.from({ length: slotCount }, (_, id) => ({ id, tokens: [], busy: false, lastUsedTick: 0 }));
    this.ram = ramCache ? [] : null;
  }

  get slotCount(): number {
    return this.slots.length;
  }

  /** What GET /slots shows of each slot. */
  describe(): Array<{ id: number; is_processing: boolean; n_tokens: number }> {
    return this.slots.map((s) => ({ id: s.id, is_processing: s.busy, n_tokens: s.tokens.length }));
  }

  /** Tokens held in all slots. */
  get cachedTokens(): number {
    return this.slots.reduce((n, s) => n + s.tokens.length, 0);
  }

  isFull(): boolean {
    return this.slots.every((s) => s.busy);
  }

  claim(req: CacheRequest): CacheClaim | null {
    const pick = this.pick(req);
    if (pick === null) return null;
    const { slot, saveAndLoad } = pick;
    if (saveAndLoad && this.ram !== null) {
      this.save(slot.tokens);
      this.load(slot, req.inputIds);
    }
    slot.busy = true;
    // llama.cpp's --cache-idle-slots: every idle slot is copied to RAM when a task starts.
    if (this.ram !== null) for (const other of this.slots) if (!other.busy) this.save(other.tokens);
    return {
      match: () => {
        // One tier: a slot's cache lives in device memory (the host-RAM copies are loaded back into it at claim).
        const tokens = req.cachePrompt ? Math.min(commonPrefix(slot.tokens, req.inputIds), req.inputIds.length - 1) : 0;
        return { tokens, deviceTokens: tokens, hostTokens: 0, slot: slot.id };
      },
      insert: () => {
        slot.tokens = req.inputIds.slice();
      },
      release: (generated) => {
        // A conversation's next turn sends them back: it hits them, as on the real server.
        for (let i = 0; i < generated - 1; i++) slot.tokens.push(outputTokenId(i, this.vocabSize));
        slot.busy = false;
        slot.lastUsedTick = ++this.tick;
        const waiters = this.eraseWaiters.get(slot.id);
        this.eraseWaiters.delete(slot.id);
        for (const wake of waiters ?? []) wake();
      },
    };
  }

  /** Empties slot `id` (modulo the slot count) once it is idle; resolves with the tokens it held. */
  async erase(id: number): Promise<number> {
    const slot = this.slots[id % this.slots.length]!;
    while (slot.busy) await new Promise<void>((resolve) => this.eraseWaiters.set(slot.id, [...(this.eraseWaiters.get(slot.id) ?? []), resolve]));
    const erased = slot.tokens.length;
    slot.tokens = [];
    return erased;
  }

  /** The slot a request gets now (null: it waits), and whether the RAM cache is consulted. */
  private pick(req: CacheRequest): { slot: Slot; saveAndLoad: boolean } | null {
    const ids = req.inputIds;
    if (req.idSlot !== null) {
      const slot = this.slots[((req.idSlot % this.slots.length) + this.slots.length) % this.slots.length]!;
      if (slot.busy) return null;
      if (slot.tokens.length === 0) return { slot, saveAndLoad: false };
      const lcp = commonPrefix(slot.tokens, ids);
      const similar = lcp / ids.length > SIMILARITY;
      return { slot, saveAndLoad: (similar ? lcp : 0) / slot.tokens.length < 0.5 };
    }
    let best: Slot | null = null;
    let bestSimilarity = 0;
    for (const slot of this.slots) {
      if (slot.busy || slot.tokens.length === 0) continue;
      const similarity = commonPrefix(slot.tokens, ids) / ids.length;
      if (similarity > bestSimilarity && similarity > SIMILARITY) {
        best = slot;
        bestSimilarity = similarity;
      }
    }
    if (best !== null) return { slot: best, saveAndLoad: (bestSimilarity * ids.length) / best.tokens.length < 0.5 };
    let lru: Slot | null = null;
    for (const slot of this.slots) if (!slot.busy && (lru === null || slot.lastUsedTick <= lru.lastUsedTick)) lru = slot;
    return lru === null ? null : { slot: lru, saveAndLoad: true };
  }

  /** Copies a slot's tokens to RAM, unless a saved state already holds them; drops saved states they contain. */
  private save(tokens: number[]): void {
    const ram = this.ram!;
    if (tokens.length === 0 || ram.some((state) => commonPrefix(state, tokens) === tokens.length)) return;
    for (let i = ram.length - 1; i >= 0; i--) if (commonPrefix(ram[i]!, tokens) === ram[i]!.length) ram.splice(i, 1);
    ram.push(tokens.slice());
  }

  /** Moves the saved state that keeps and serves the most of `ids` into the slot, if it beats the slot's own. */
  private load(slot: Slot, ids: number[]): void {
    const ram = this.ram!;
    const own = commonPrefix(slot.tokens, ids);
    let keepBest = slot.tokens.length > 0 ? own / slot.tokens.length : -1;
    let similarityBest = own / ids.length;
    let best = -1;
    for (let i = 0; i < ram.length; i++) {
      const lcp = commonPrefix(ram[i]!, ids);
      const keep = lcp / ram[i]!.length;
      if (keep < RAM_MIN_KEEP) continue;
      if (keepBest < keep && similarityBest < lcp / ids.length) {
        keepBest = keep;
        similarityBest = lcp / ids.length;
        best = i;
      }
    }
    if (best >= 0) slot.tokens = ram.splice(best, 1)[0]!;
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
