import { describe, expect, it } from 'vitest';
import {
  durationBetween,
  formatDuration,
  formatFraction,
  formatMoney,
  formatUtc,
  relativeTime,
} from './format';

describe('format', () => {
  it('durations read at a glance at every scale', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(8_345)).toBe('8.3 s');
    expect(formatDuration(12_345)).toBe('12 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(245_000)).toBe('4 min 05 s');
    expect(formatDuration(7_380_000)).toBe('2 h 03 min');
    expect(formatDuration(undefined)).toBe('—');
  });

  it('measure up to now while a run is open', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    expect(durationBetween('2026-01-01T00:00:00Z', undefined, now)).toBe(60_000);
    expect(durationBetween('2026-01-01T00:00:00Z', '2026-01-01T00:00:05Z', now)).toBe(5_000);
    expect(durationBetween(undefined, undefined, now)).toBeUndefined();
  });

  it('relative times, past and future', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(relativeTime('2026-01-01T11:59:58Z', now)).toBe('just now');
    expect(relativeTime('2026-01-01T11:55:00Z', now)).toBe('5 min ago');
    expect(relativeTime('2025-12-30T12:00:00Z', now)).toBe('2 d ago');
    expect(relativeTime('2026-01-01T15:00:00Z', now)).toBe('in 3 h');
  });

  it('market moments in UTC, fractions in percent', () => {
    expect(formatUtc('2026-09-20T00:00:00Z')).toBe('2026-09-20 00:00 UTC');
    expect(formatUtc('2026-09-20T06:30:15.000Z')).toBe('2026-09-20 06:30:15 UTC');
    expect(formatFraction(0.12)).toBe('12%');
    expect(formatFraction(0.075)).toBe('7.5%');
    expect(formatMoney(10812.4999)).toBe('10,812.50');
  });
});
