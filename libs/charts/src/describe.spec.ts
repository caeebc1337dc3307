import { describe, expect, it } from 'vitest';
import { createChartFrame } from './chart-frame';
import { composeDescription, MAX_DESCRIPTION_LENGTH } from './describe';
import { syntheticSeries } from './testing';

const frame = createChartFrame(syntheticSeries([1, 2, 3], '1d'), { width: 640, height: 480 }, 3);

describe('composeDescription', () => {
  it('cuts at a clause boundary and keeps reading order', () => {
    const facts = Array.from({ length: 30 }, (_, i) => `fact number ${i} ${'x'.repeat(20)}`);
    const text = composeDescription('head', facts, frame);
    expect(text.length).toBeLessThanOrEqual(MAX_DESCRIPTION_LENGTH);
    expect(text).toMatch(/^head; fact number 0 x+; fact number 1 /);
    expect(text.endsWith('x.')).toBe(true);
  });

  it('never cuts a kept clause (why a pane is empty), dropping ordinary facts instead', () => {
    const facts = Array.from({ length: 30 }, (_, i) => `fact number ${i} ${'x'.repeat(20)}`);
    const notes = [
      'RSI(14) needs 15 bars, 9 available',
      'MACD(12,26,9) needs 34 bars, 9 available',
    ];
    const text = composeDescription('head', [...facts, ...notes], frame, notes);
    expect(text.length).toBeLessThanOrEqual(MAX_DESCRIPTION_LENGTH);
    expect(text).toContain('; RSI(14) needs 15 bars, 9 available; MACD(12,26,9) needs 34 bars');
    expect(text).toMatch(/^head; fact number 0 /);
    // Without `keep` the notes at the end are what gets cut.
    expect(composeDescription('head', [...facts, ...notes], frame)).not.toContain('needs');
  });
});
