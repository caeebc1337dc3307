import { describe, expect, it } from 'vitest';
import { producingRunId } from './rerun';
import { hasStep, stepOf } from './step-lookup';
import { makeRun } from './testing/run-fixtures';

const INHERITED = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'];

describe('stepOf / hasStep', () => {
  const run = makeRun({ ohlcv: { status: 'SUCCEEDED' } });

  it('finds the run’s own steps', () => {
    expect(hasStep(run, 'ohlcv')).toBe(true);
    expect(stepOf(run, 'ohlcv')?.status).toBe('SUCCEEDED');
    expect(hasStep(run, 'charts')).toBe(false);
    expect(stepOf(run, 'charts')).toBeUndefined();
  });

  it('never takes an Object.prototype member for a step', () => {
    for (const stepId of INHERITED) {
      expect({ stepId, found: hasStep(run, stepId) }).toEqual({ stepId, found: false });
      expect(stepOf(run, stepId)).toBeUndefined();
      expect(producingRunId(run, stepId)).toBe(run.runId);
    }
  });
});
