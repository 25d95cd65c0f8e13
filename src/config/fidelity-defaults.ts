/** Defaults of the cache-fidelity check (--check-fidelity): the flags' declarations and the parser read them. */
export const FIDELITY_DEFAULTS = {
  /** Prompts compared per line: enough to catch a cache that corrupts every hit, cheap enough to leave on. */
  sample: 4,
  /** Near-tie flips reported on engines' cached paths were about 0.02 nats; 0.1 leaves room, no more. */
  tieNats: 0.1,
} as const;
