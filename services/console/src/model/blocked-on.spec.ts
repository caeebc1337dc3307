import { describe, expect, it } from 'vitest';
import type { BlockedOn } from '../api/api-types';
import { plainReasons } from './blocked-on';

const base = {
  runId: 'r',
  runStatus: 'RUNNING',
  stepId: 's',
  status: 'PENDING',
  summary: 's is PENDING: raw',
} as const;

function explain(reasons: object[]): BlockedOn {
  return { ...base, reasons: reasons as BlockedOn['reasons'] };
}

describe('plainReasons', () => {
  it('names the dependencies a step waits for and the work going on upstream', () => {
    const out = plainReasons(
      explain([
        {
          kind: 'waiting_for_dependencies',
          dependencies: [{ stepId: 'charts:1d', status: 'PENDING' }],
          frontier: [
            { stepId: 'charts:1d', status: 'PENDING' },
            { stepId: 'ohlcv_export:1d', status: 'RUNNING' },
          ],
        },
      ]),
    );
    expect(out).toEqual([
      {
        text: 'It waits for charts:1d (pending) to finish.',
        stepIds: ['charts:1d'],
        warning: false,
      },
      {
        text: 'Work is happening further upstream in ohlcv_export:1d (running).',
        stepIds: ['ohlcv_export:1d'],
        warning: false,
      },
    ]);
  });

  it('explains a queued run by position and the limit it waits for', () => {
    const [reason] = plainReasons(
      explain([
        {
          kind: 'queued',
          position: 2,
          queueLength: 3,
          ownerPosition: 1,
          ownerQueueLength: 1,
          admissible: false,
          waitingFor: [{ kind: 'running_limit', running: 20, limit: 20 }],
        },
      ]),
    );
    expect(reason?.text).toBe(
      'The run is queued: position 2 of 3. It waits because all 20 run slots are taken.',
    );
  });

  it('flags what is wrong: a failed dependency, an expired lease', () => {
    const out = plainReasons(
      explain([
        { kind: 'dependency_failed', stepId: 'a', status: 'FAILED' },
        { kind: 'running', attempt: 2, leaseOwner: 'w/1', expired: true },
      ]),
    );
    expect(out.map((r) => r.warning)).toEqual([true, true]);
    expect(out[0]?.stepIds).toEqual(['a']);
    expect(out[1]?.text).toMatch(/^Attempt 2 was taken by worker w\/1 but its lease has expired/);
  });

  it('falls back to the server summary for a reason it does not know', () => {
    expect(plainReasons(explain([{ kind: 'something_new' }]))).toEqual([
      { text: 's is PENDING: raw', stepIds: [], warning: false },
    ]);
  });
});
