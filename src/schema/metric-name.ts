/**
 * One pattern for a statistic's name. The script's keys read `STAT_METRIC_UNIT` (`p99_ttft_ms`); warmbench's own
 * keys of 0.1-0.3 read `METRIC_STAT_UNIT` (`ttft_from_intended_p99_ms`) and keep that name in files (old files and
 * tools reading them stay valid). Where a user names a metric (gates, compare's limits), both orders name the same
 * key, so `p99_ttft_from_intended_ms` is the natural spelling and the stored name still reads.
 */
const STAT_FIRST = /^(mean|median|std|min|max|p\d{1,2})_([a-z0-9_]+)_(ms|s|pct)$/;

/** The key a user's metric name stands for: the name itself when it is one, else the other order's key if it is. */
export function canonicalMetricName(name: string, isKey: (key: string) => boolean): string {
  if (isKey(name)) return name;
  const m = STAT_FIRST.exec(name);
  if (m === null) return name;
  const swapped = `${m[2]}_${m[1]}_${m[3]}`;
  return isKey(swapped) ? swapped : name;
}
