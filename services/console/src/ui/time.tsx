import { useEffect, useState } from 'react';
import { formatTimestamp, relativeTime } from '../model/format';

/** A clock that ticks every `intervalMs` while `active` (durations of running things). */
export function useNow(intervalMs = 1000, active = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs, active]);
  return now;
}

/** "5 min ago", with the exact local time and the ISO UTC value on hover. */
export function RelativeTime({ iso, now }: { iso: string | undefined; now: number }) {
  if (iso === undefined) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={`${formatTimestamp(iso)} (${iso})`}>
      {relativeTime(iso, now)}
    </time>
  );
}

export function Timestamp({ iso }: { iso: string | undefined }) {
  if (iso === undefined) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {formatTimestamp(iso)}
    </time>
  );
}
