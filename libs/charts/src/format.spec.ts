import { describe, expect, it } from 'vitest';
import {
  formatAxisPrice,
  formatAxisTime,
  formatBarTime,
  formatCompact,
  formatFixed,
  formatPercent,
  formatPrice,
  timeAxisName,
} from './format';

describe('formatPrice', () => {
  it('groups thousands without decimals from 1,000 up', () => {
    expect(formatPrice(43193.234375)).toBe('43,193');
    expect(formatPrice(1234567.8)).toBe('1,234,568');
    expect(formatPrice(-68790.5)).toBe('-68,791');
  });

  it('keeps 2 decimals from 1 and 4 significant digits below', () => {
    expect(formatPrice(903.71)).toBe('903.71');
    expect(formatPrice(1.5)).toBe('1.50');
    expect(formatPrice(0.0123456)).toBe('0.01235');
    expect(formatPrice(0.00001234)).toBe('1.234e-5');
    expect(formatPrice(0)).toBe('0');
  });

  it('never prints a negative zero or NaN', () => {
    expect(formatPrice(-0.0000001)).not.toMatch(/^-0$/);
    expect(formatFixed(-0.04, 1)).toBe('0.0');
    expect(formatPrice(Number.NaN)).toBe('n/a');
  });
});

describe('formatPercent', () => {
  it('is signed with one decimal', () => {
    expect(formatPercent(0.1223)).toBe('+12.2%');
    expect(formatPercent(-0.04)).toBe('-4.0%');
    expect(formatPercent(-0.00001)).toBe('0.0%');
    expect(formatPercent(35.603)).toBe('+3560.3%');
  });
});

describe('formatCompact', () => {
  it('uses K/M/B/T and drops trailing zeros', () => {
    expect(formatCompact(3e12)).toBe('3T');
    expect(formatCompact(1.5e12)).toBe('1.5T');
    expect(formatCompact(671_335_993_325)).toBe('671B');
    expect(formatCompact(100e9)).toBe('100B');
    expect(formatCompact(32_479_047_645)).toBe('32.5B');
    expect(formatCompact(-5000)).toBe('-5K');
    expect(formatCompact(950)).toBe('950.00');
  });

  it('keeps price axes readable', () => {
    expect(formatAxisPrice(2_500_000)).toBe('2.5M');
    expect(formatAxisPrice(20000)).toBe('20,000');
  });
});

describe('bar time labels', () => {
  it('uses the timeframe precision in UTC', () => {
    expect(formatBarTime('2022-02-01T00:00:00Z', '1M')).toBe('2022-02');
    expect(formatBarTime('2022-02-21T00:00:00Z', '1w')).toBe('2022-02-21');
    expect(formatBarTime('2022-02-21T00:00:00Z', '1d')).toBe('2022-02-21');
    expect(formatBarTime('2026-01-05T08:00:00Z', '4h')).toBe('2026-01-05 08:00');
    expect(formatAxisTime('2022-02-01T00:00:00Z', '1M')).toBe('2022-02');
  });

  it('labels intraday ticks with the full date (01-05 would read as 1 May in half the world)', () => {
    expect(formatAxisTime('2026-01-05T13:00:00Z', '1h')).toBe('2026-01-05 13:00');
    expect(formatAxisTime('2026-01-05T08:00:00Z', '4h')).toBe('2026-01-05 08:00');
  });

  it('names the time axis with its zone, intraday and daily+', () => {
    expect(timeAxisName('1h')).toBe('Bar open time (UTC)');
    expect(timeAxisName('4h')).toBe('Bar open time (UTC)');
    expect(timeAxisName('1d')).toBe('Day (UTC)');
    expect(timeAxisName('1w')).toBe('Week starting (UTC)');
    expect(timeAxisName('1M')).toBe('Month (UTC)');
  });
});
