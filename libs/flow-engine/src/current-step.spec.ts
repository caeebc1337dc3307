import type { StepStatus } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { currentStepOf } from './current-step';
import { iso, makeRun } from './testing/run-fixtures';

const statusesOf = (run: ReturnType<typeof makeRun>): Map<string, StepStatus> =>
  new Map(Object.entries(run.steps).map(([id, s]) => [id, s.status]));

describe('currentStepOf (seed 004 current_step)', () => {
  it('is the first RUNNING step in DAG order, else the failed one, else the next READY one', () => {
    const running = makeRun({
      z: { status: 'RUNNING' },
      a: { status: 'RUNNING', dependsOn: ['b'] },
      b: { status: 'SUCCEEDED', finishedAt: iso(1) },
    });
    // Kahn with ties by id: b, then a (now ready) before z.
    expect(currentStepOf(running, statusesOf(running))).toBe('a');
    const failed = makeRun({ a: { status: 'FAILED' }, b: { status: 'READY' } });
    expect(currentStepOf(failed, statusesOf(failed))).toBe('a');
    const ready = makeRun({ a: { status: 'SUCCEEDED' }, b: { status: 'READY', dependsOn: ['a'] } });
    expect(currentStepOf(ready, statusesOf(ready))).toBe('b');
  });

  it('is the SUCCEEDED step that finished last for a finished run, and absent before any start', () => {
    const done = makeRun({
      a: { status: 'SUCCEEDED', finishedAt: iso(30) },
      b: { status: 'SUCCEEDED', finishedAt: iso(20) },
      c: { status: 'SKIPPED', finishedAt: iso(40) },
    });
    expect(currentStepOf(done, statusesOf(done))).toBe('a');
    const fresh = makeRun({ a: {}, b: { dependsOn: ['a'] } });
    expect(currentStepOf(fresh, statusesOf(fresh))).toBeUndefined();
  });

  it('reads the statuses a decision leaves, not the stored ones', () => {
    const run = makeRun({ a: { status: 'RUNNING' }, b: { status: 'READY' } });
    const decided = new Map<string, StepStatus>([
      ['a', 'CANCELLED'],
      ['b', 'CANCELLED'],
    ]);
    expect(currentStepOf(run, decided)).toBeUndefined();
  });
});
