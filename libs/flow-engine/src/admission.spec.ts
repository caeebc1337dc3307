import { describe, expect, it } from 'vitest';
import {
  admissionRun,
  compareCreationOrder,
  decideActiveQuota,
  decideQueuedRun,
  describeQueueEntry,
  planAdmission,
  type AdmissionRun,
} from './admission';
import { blockedOn } from './blocked-on';
import { at, iso, makeRun } from './testing/run-fixtures';

const LIMITS = { maxRunning: 3, maxRunningPerOwner: 2 };

/** A queued run created `second` seconds after T0. */
function queued(runId: string, ownerId: string, second: number): AdmissionRun {
  return { runId, ownerId, createdAt: iso(second) };
}

const owners = (...ids: string[]) => ids.map((ownerId) => ({ ownerId }));

describe('planAdmission', () => {
  it('admits the oldest queued runs while slots are free, in creation order', () => {
    const plan = planAdmission(
      owners('a'),
      [queued('r3', 'c', 3), queued('r1', 'b', 1), queued('r2', 'd', 2)],
      LIMITS,
    );
    expect(plan.admit.map((r) => r.runId)).toEqual(['r1', 'r2']);
    expect(plan.running).toBe(3);
    expect(plan.queue.map((e) => [e.runId, e.position, e.admissible])).toEqual([
      ['r1', 1, true],
      ['r2', 2, true],
      ['r3', 3, false],
    ]);
    expect(plan.queue[2]?.waitingFor).toEqual([{ kind: 'running_limit', running: 3, limit: 3 }]);
  });

  it('lets runs of other owners pass a run held back by its own owner limit', () => {
    const plan = planAdmission(
      owners('alice', 'alice'),
      [queued('a3', 'alice', 1), queued('b1', 'bob', 2), queued('a4', 'alice', 3)],
      LIMITS,
    );
    expect(plan.admit.map((r) => r.runId)).toEqual(['b1']);
    expect(plan.queue.find((e) => e.runId === 'a3')).toMatchObject({
      position: 1,
      ownerPosition: 1,
      ownerQueueLength: 2,
      admissible: false,
      waitingFor: [{ kind: 'owner_running_limit', ownerId: 'alice', running: 2, limit: 2 }],
    });
    // b1 took the last overall slot: a4 now waits for both limits
    expect(plan.queue.find((e) => e.runId === 'a4')?.waitingFor.map((w) => w.kind)).toEqual([
      'running_limit',
      'owner_running_limit',
    ]);
    expect(plan.runningByOwner).toEqual({ alice: 2, bob: 1 });
  });

  it('admits nothing when the overall limit is reached, and nothing behind an overall wait', () => {
    const plan = planAdmission(owners('a', 'b', 'c'), [queued('x', 'z', 1)], LIMITS);
    expect(plan.admit).toEqual([]);
    expect(plan.queue[0]).toMatchObject({ position: 1, queueLength: 1, admissible: false });
  });

  it('orders equal createdAt by runId, counts a run listed twice once, and ignores input order', () => {
    const runs = [queued('b', 'o1', 1), queued('a', 'o2', 1), queued('a', 'o2', 1)];
    const plan = planAdmission([], runs, { maxRunning: 1, maxRunningPerOwner: 1 });
    expect(plan.queue.map((e) => e.runId)).toEqual(['a', 'b']);
    expect(plan.admit.map((r) => r.runId)).toEqual(['a']);
    expect(
      planAdmission([], [...runs].reverse(), { maxRunning: 1, maxRunningPerOwner: 1 }),
    ).toEqual(plan);
    expect(compareCreationOrder(queued('a', 'x', 1), queued('a', 'y', 1))).toBe(0);
  });
});

describe('describeQueueEntry', () => {
  it('says the position and what the run waits for', () => {
    const plan = planAdmission(
      owners('alice', 'alice', 'bob'),
      [queued('q1', 'alice', 1), queued('q2', 'alice', 2)],
      LIMITS,
    );
    const [first, second] = plan.queue;
    if (first === undefined || second === undefined) throw new Error('queue too short');
    expect(describeQueueEntry(first)).toBe(
      'queued (position 1 of 2): all 3 run slots are taken (3 running); owner alice has 2 of 2 allowed runs running (its queued run 1 of 2)',
    );
    const free = planAdmission([], [queued('q1', 'alice', 1)], LIMITS).queue[0];
    if (free === undefined) throw new Error('no entry');
    expect(describeQueueEntry(free)).toBe(
      'queued (position 1 of 1): a slot is free, it starts with the next admission pass',
    );
    expect(describeQueueEntry(second)).toContain('queued (position 2 of 2)');
  });
});

describe('decideActiveQuota', () => {
  it('refuses a trigger once the owner has `limit` active runs', () => {
    expect(decideActiveQuota('alice', 1, 2)).toEqual({ kind: 'allow' });
    expect(decideActiveQuota('alice', 2, 2)).toEqual({
      kind: 'exceeded',
      ownerId: 'alice',
      active: 2,
      limit: 2,
    });
  });
});

describe('decideQueuedRun', () => {
  const pendingRun = (overrides: Parameters<typeof makeRun>[1] = {}) =>
    makeRun({ a: {}, b: { dependsOn: ['a'] } }, overrides);

  it('lets a queued run wait, and never starts it', () => {
    expect(decideQueuedRun(pendingRun({ deadlineAt: iso(600) }), at(30))).toEqual({
      kind: 'wait',
    });
  });

  it('ends a queued run whose cancel was requested or whose deadline passed', () => {
    const cancelled = decideQueuedRun(pendingRun({ cancelRequestedAt: iso(5) }), at(10));
    expect(cancelled).toMatchObject({ kind: 'end', advance: { runStatus: 'CANCELLED' } });
    const expired = decideQueuedRun(pendingRun({ deadlineAt: iso(60) }), at(60));
    expect(expired).toMatchObject({
      kind: 'end',
      advance: { runStatus: 'FAILED', runError: { code: 'RUN_TIMEOUT' }, newlyReady: [] },
    });
  });

  it('reports a run that is no longer PENDING', () => {
    expect(decideQueuedRun(pendingRun({ status: 'RUNNING' }), at(1))).toEqual({
      kind: 'not_queued',
    });
  });

  it('admissionRun keeps what admission needs', () => {
    const run = pendingRun({ ownerId: 'alice' });
    expect(admissionRun(run)).toEqual({
      runId: run.runId,
      ownerId: 'alice',
      createdAt: run.createdAt,
    });
  });
});

describe('blockedOn with a queue entry', () => {
  const run = makeRun({ a: {}, b: { dependsOn: ['a'] } });
  const entry = planAdmission(owners('user-1'), [admissionRun(run), queued('z', 'x', 99)], {
    maxRunning: 1,
    maxRunningPerOwner: 1,
  }).queue[0];

  it('replaces awaiting_advance with the queue position of a PENDING run', () => {
    if (entry === undefined) throw new Error('no entry');
    const explanation = blockedOn(run, 'a', at(1), { queue: entry });
    expect(explanation.reasons).toEqual([
      {
        kind: 'queued',
        position: 1,
        queueLength: 2,
        ownerPosition: 1,
        ownerQueueLength: 1,
        admissible: false,
        waitingFor: [
          { kind: 'running_limit', running: 1, limit: 1 },
          { kind: 'owner_running_limit', ownerId: 'user-1', running: 1, limit: 1 },
        ],
      },
    ]);
    expect(explanation.summary).toBe(
      'a is PENDING: queued (position 1 of 2): all 1 run slots are taken (1 running); owner user-1 has 1 of 1 allowed runs running',
    );
    // a step with dependencies still names them after the queue reason
    expect(blockedOn(run, 'b', at(1), { queue: entry }).reasons.map((r) => r.kind)).toEqual([
      'queued',
      'waiting_for_dependencies',
    ]);
  });

  it('ignores the entry for a run that is not PENDING or for another run', () => {
    if (entry === undefined) throw new Error('no entry');
    const running = { ...run, status: 'RUNNING' as const };
    expect(blockedOn(running, 'a', at(1), { queue: entry }).reasons).toEqual([
      { kind: 'awaiting_advance' },
    ]);
    const other = { ...run, runId: '20250115-100000_BTC-USDT_zzzzz' };
    expect(blockedOn(other, 'a', at(1), { queue: entry }).reasons).toEqual([
      { kind: 'awaiting_advance' },
    ]);
  });
});
