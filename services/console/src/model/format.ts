/** "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const totalSeconds = Math.round(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** The time between two ISO timestamps, `toIso` defaulting to now. */
export function durationBetween(
  fromIso: string | undefined,
  toIso: string | undefined,
  nowMs: number,
): number | undefined {
  if (fromIso === undefined) return undefined;
  const from = Date.parse(fromIso);
  const to = toIso === undefined ? nowMs : Date.parse(toIso);
  return Number.isNaN(from) || Number.isNaN(to) ? undefined : Math.max(0, to - from);
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago" (or "in …" for the future). */
export function relativeTime(iso: string | undefined, nowMs: number): string {
  if (iso === undefined) return '—';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const delta = nowMs - at;
  const abs = Math.abs(delta);
  if (abs < 5_000) return 'just now';
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  const [size, unit] = units.find(([s]) => abs >= s) ?? [1_000, 's'];
  const amount = Math.floor(abs / size);
  return delta >= 0 ? `${amount} ${unit} ago` : `in ${amount} ${unit}`;
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** A timestamp in the viewer's time zone (the ISO UTC form goes in a title). */
export function formatTimestamp(iso: string | undefined): string {
  if (iso === undefined) return '—';
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : DATE_TIME.format(at);
}

/** A market moment (asOf) the way the API states it: UTC. */
export function formatUtc(iso: string | undefined): string {
  if (iso === undefined) return '—';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  return `${new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/(:00)?\.000Z$/, '')
    .replace(/Z$/, '')} UTC`;
}

const NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 8 });
const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });

const MONEY = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});

/** Amounts of a currency: two decimals. */
export function formatMoney(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '—' : MONEY.format(value);
}

export function formatNumber(value: number | undefined, compact = false): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return compact ? COMPACT.format(value) : NUMBER.format(value);
}

/** 0.125 → "12.5%". */
export function formatFraction(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(value * 100 < 10 ? 1 : 0)}%`;
}
