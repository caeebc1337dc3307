import type { IndicatorValues } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import {
  INDICATORS_ON_DEMAND_STEP,
  indicatorValuesProblem,
} from './indicators-on-demand.step-type';

const example = (): IndicatorValues =>
  loadExample('indicator_values.example.json') as IndicatorValues;

/** The example's first indicator (RSI, status ok). */
function rsi(values: IndicatorValues) {
  const [first] = values.indicators;
  if (first?.latest === null || first === undefined) throw new Error('the example starts with RSI');
  return first;
}

describe('INDICATORS_ON_DEMAND_STEP artifact check', () => {
  it('accepts the example (valid, consistent)', () => {
    const values = example();
    expect(INDICATORS_ON_DEMAND_STEP.artifact.validate(values).ok).toBe(true);
    expect(indicatorValuesProblem(values)).toBeUndefined();
    expect(INDICATORS_ON_DEMAND_STEP.artifact.identity(values)).toEqual({
      runId: values.runId,
      stepId: values.stepId,
      timeframe: '1M',
    });
  });

  it('the schema ties status to latest, tail and reason', () => {
    const values = example();
    const ok = rsi(values);
    ok.status = 'insufficient_data';
    expect(INDICATORS_ON_DEMAND_STEP.artifact.validate(values).ok).toBe(false);
    const missing = example();
    const insufficient = missing.indicators[1];
    if (insufficient === undefined) throw new Error('the example has MACD second');
    delete insufficient.reason;
    expect(INDICATORS_ON_DEMAND_STEP.artifact.validate(missing).ok).toBe(false);
  });

  it.each([
    [
      'a window that ends after asOf',
      (v: IndicatorValues) => void (v.asOf = '2022-02-28T00:00:00Z'),
      /window.to .* is after asOf/,
    ],
    [
      'a window end that is not the last candle’s',
      (v: IndicatorValues) => void (v.window.to = '2022-02-15T00:00:00Z'),
      /not the end of the 1M candle/,
    ],
    [
      'a tail point after the last complete candle',
      (v: IndicatorValues) => {
        const point = rsi(v).tail.at(-1);
        if (point) point.openTime = '2022-03-01T00:00:00Z';
      },
      /outside the window|latest is not the last point/,
    ],
    [
      'a tail out of order',
      (v: IndicatorValues) => void rsi(v).tail.reverse(),
      /ascending openTime/,
    ],
    [
      'a latest value that is not the tail’s last',
      (v: IndicatorValues) => {
        const latest = rsi(v).latest;
        if (latest) latest.values['value'] = 1;
      },
      /latest is not the last point of tail/,
    ],
    [
      'a point without its fields',
      (v: IndicatorValues) => {
        const point = rsi(v).tail[0];
        if (point) point.values = { other: 1 };
      },
      /values are not its fields/,
    ],
    [
      'ok with fewer candles than the warm-up',
      (v: IndicatorValues) => void (rsi(v).requiredCandles = 25),
      /fewer than the 25 it needs/,
    ],
    [
      'a tail longer than tailLength',
      (v: IndicatorValues) => void (v.tailLength = 2),
      /tail longer than tailLength/,
    ],
  ])('refuses %s', (_, mutate, problem) => {
    const values = example();
    mutate(values);
    expect(indicatorValuesProblem(values)).toMatch(problem);
  });
});
