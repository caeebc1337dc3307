import type { FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { applyPatch } from './patch';
import { reconcileEndedRun, reconcileRun } from './reconcile';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

const ended = (status: 'FAILED' | 'CANCELLED' | 'SUCCEEDED' | 'RUNNING') =>
  makeRun(
    {
      a: { status: 'FAILED', attempt: 1 },
      dead: {
        status: 'RUNNING',
        attempt: 2,
        deadlineAt: iso(10),
        lease: { owner: 'w-dead', expiresAt: iso(100) },
      },
      live: {
        status: 'RUNNING',
        attempt: 1,
        deadlineAt: iso(10),
        lease: { owner: 'w-live', expiresAt: iso(500) },
      },
      p: { status: 'READY', readyAt: iso(1) },
    },
    { status, finishedAt: iso(50) },
  );

describe('reconcileEndedRun', () => {
  it.each(['FAILED', 'CANCELLED'] as const)(
    'closes an expired RUNNING step of a %s run as CANCELLED; a live lease is left to its worker',
    (status) => {
      const run = ended(status);
      const result = reconcileEndedRun(run, { now: at(200) });
      expect(result.cancelled).toEqual(['dead']);
      expect(result.republish).toEqual([]);
      expect(result.reclaimed).toEqual([]);
      expect(result.failed).toEqual([]);
      expect(result.drift).toEqual([
        {
          kind: 'lease_expired',
          action: 'cancel_step',
          stepId: 'dead',
          detail: { attempt: 2, leaseOwner: 'w-dead', leaseExpiresAt: iso(100), runStatus: status },
        },
      ]);
      const next = applyPatch(run, result.patch);
      // the stale READY step is not republished or touched; the run keeps its status
      expect(statusesOf(next)).toEqual({
        a: 'FAILED',
        dead: 'CANCELLED',
        live: 'RUNNING',
        p: 'READY',
      });
      expect(next.status).toBe(status);
      expect(next.steps['dead']?.lease).toBeUndefined();
      expect(next.steps['dead']?.error?.code).toBe('CANCELLED');
      expect(next.progress).toMatchObject({ running: 1, cancelled: 1 });
      expect(
        Object.keys(result.patch).every((k) => k === 'progress' || k.startsWith('steps.dead.')),
      ).toBe(true);
    },
  );

  it('writes nothing while every lease is live, even with stale progress counters', () => {
    const run = ended('CANCELLED');
    const stale: FlowRun = {
      ...run,
      progress: {
        total: 0,
        pending: 0,
        ready: 0,
        running: 0,
        succeeded: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
      },
    };
    expect(reconcileRun(stale, { now: at(99), republishReadyAfterMs: 0 }).patch).toHaveProperty(
      'progress',
    );
    const result = reconcileEndedRun(stale, { now: at(99) });
    expect(result).toMatchObject({ patch: {}, cancelled: [], drift: [] });
  });

  it('does nothing for a run that is not terminal (re-opened since it was listed)', () => {
    const result = reconcileEndedRun(ended('RUNNING'), { now: at(200) });
    expect(result).toMatchObject({ patch: {}, cancelled: [], drift: [] });
  });
});
