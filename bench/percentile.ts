// The one statistic every part of the bench quotes: a quantile of sorted samples.

/** The `q` quantile (0–1) of sorted samples, nearest rank. */
export function percentile (sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
}
