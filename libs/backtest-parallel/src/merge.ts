import { TopK, type UnitRange, type VariantScore } from '@tda/backtest';

/** `count` contiguous shards as equal as possible (never empty) covering [0, total). */
export function planShards(total: number, count: number): UnitRange[] {
  const n = Math.max(1, Math.min(total, count));
  return Array.from({ length: n }, (_, i) => ({
    from: Math.floor((total * i) / n),
    to: Math.floor((total * (i + 1)) / n),
  }));
}

/** Merges per-shard top-Ks into one (same ranking as TopK). */
export function mergeTops(lists: readonly VariantScore[][], capacity: number): VariantScore[] {
  const top = new TopK<VariantScore & { score: number; key: string }>(capacity);
  for (const list of lists) {
    for (const v of list)
      top.offer({ ...v, score: v.metrics.total_return_pct, key: v.variant_key });
  }
  return top.toArray().map(({ variant_key, base_variant_key, spec, execution, metrics }) => ({
    variant_key,
    base_variant_key,
    spec,
    execution,
    metrics,
  }));
}
