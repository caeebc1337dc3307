export function Skeleton({
  width = '100%',
  height = 14,
}: {
  width?: number | string;
  height?: number;
}) {
  return <span className="skeleton" style={{ width, height }} aria-hidden="true" />;
}

/** Placeholder lines while something loads (announced once to screen readers). */
export function SkeletonBlock({
  lines = 3,
  label = 'Loading',
}: {
  lines?: number;
  label?: string;
}) {
  return (
    <div className="skeleton-block" role="status" aria-label={label}>
      {Array.from({ length: lines }, (_, i) => (
        <Skeleton key={i} width={`${90 - ((i * 17) % 40)}%`} />
      ))}
    </div>
  );
}
