/** `warmbench capacity`'s defaults and its search modes. */
export const CAPACITY_DEFAULTS = {
  search: "rate",
  pcts: "0,90",
  /** Enough for a p99 with a couple of samples beyond it (a p99 of 100 requests is their largest but one). */
  probeRequests: 200,
  precision: "5%",
  confirm: 2,
  start: "auto",
  bracket: { rate: [0.1, 10_000], concurrency: [1, 4096] },
} as const;

export const SEARCH_MODES = ["rate", "concurrency"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
