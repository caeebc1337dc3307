import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCreationOrder, countRunning, planAdmission, type AdmissionRun } from './admission';
import { iso } from './testing/run-fixtures';

const OWNERS = ['alice', 'bob', 'carol', 'dave'] as const;

const limitsArb = fc.record({
  maxRunning: fc.integer({ min: 1, max: 6 }),
  maxRunningPerOwner: fc.integer({ min: 1, max: 4 }),
});

/** Queued runs with distinct ids; createdAt collisions on purpose (tie-break by runId). */
const queuedArb = fc
  .array(
    fc.record({ owner: fc.constantFrom(...OWNERS), second: fc.integer({ min: 0, max: 20 }) }),
    {
      maxLength: 15,
    },
  )
  .map((rows) =>
    rows.map((row, i): AdmissionRun => ({
      runId: `run-${String(i).padStart(2, '0')}`,
      ownerId: row.owner,
      createdAt: iso(row.second),
    })),
  );

const runningArb = fc
  .array(fc.constantFrom(...OWNERS), { maxLength: 8 })
  .map((ids) => ids.map((ownerId) => ({ ownerId })));

function countBy(owners: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const o of owners) counts.set(o, (counts.get(o) ?? 0) + 1);
  return counts;
}

describe('planAdmission (properties)', () => {
  it('plans the same from the running runs or from their counts (the queued owners only)', () => {
    fc.assert(
      fc.property(runningArb, queuedArb, limitsArb, (running, queued, limits) => {
        const all = countRunning(running);
        const queuedOwners = new Set(queued.map((r) => r.ownerId));
        const byOwner = new Map([...all.byOwner].filter(([owner]) => queuedOwners.has(owner)));
        const counted = planAdmission({ total: all.total, byOwner }, queued, limits);
        const listed = planAdmission(running, queued, limits);
        expect(counted.admit).toEqual(listed.admit);
        expect(counted.queue).toEqual(listed.queue);
      }),
    );
  });

  it('never exceeds a limit it started under, admits maximally, in creation order, per-owner FIFO', () => {
    fc.assert(
      fc.property(runningArb, queuedArb, limitsArb, (running, queued, limits) => {
        const plan = planAdmission(running, queued, limits);
        const before = countBy(running.map((r) => r.ownerId));
        const after = countBy([
          ...running.map((r) => r.ownerId),
          ...plan.admit.map((r) => r.ownerId),
        ]);
        // limits: admission adds nothing to an owner or to the total at or above its limit
        const added = countBy(plan.admit.map((r) => r.ownerId));
        for (const [owner, n] of added) {
          expect((before.get(owner) ?? 0) + n).toBeLessThanOrEqual(
            Math.max(limits.maxRunningPerOwner, before.get(owner) ?? 0),
          );
        }
        expect(running.length + plan.admit.length).toBeLessThanOrEqual(
          Math.max(limits.maxRunning, running.length),
        );
        expect(plan.running).toBe(running.length + plan.admit.length);
        expect(Object.fromEntries(after)).toEqual(plan.runningByOwner);

        // positions: creation order, 1..n
        const ordered = [...queued].sort(compareCreationOrder);
        expect(plan.queue.map((e) => e.runId)).toEqual(ordered.map((r) => r.runId));
        expect(plan.queue.map((e) => e.position)).toEqual(ordered.map((_, i) => i + 1));

        // maximal: every run left waiting names a limit that is full after the admission
        for (const entry of plan.queue.filter((e) => !e.admissible)) {
          const full =
            plan.running >= limits.maxRunning ||
            (plan.runningByOwner[entry.ownerId] ?? 0) >= limits.maxRunningPerOwner;
          expect(full).toBe(true);
          expect(entry.waitingFor.length).toBeGreaterThan(0);
        }

        // creation order: a run older than an admitted one was admitted or held by its owner only
        const admitted = new Set(plan.admit.map((r) => r.runId));
        const lastAdmitted = plan.queue.filter((e) => e.admissible).at(-1)?.position ?? 0;
        for (const entry of plan.queue) {
          if (entry.position >= lastAdmitted || entry.admissible) continue;
          expect(entry.waitingFor.map((w) => w.kind)).toEqual(['owner_running_limit']);
        }
        expect(plan.admit.map((r) => r.runId)).toEqual(
          plan.queue.filter((e) => admitted.has(e.runId)).map((e) => e.runId),
        );

        // per owner: the admitted runs are the oldest of that owner's queued runs
        for (const owner of OWNERS) {
          const mine = plan.queue.filter((e) => e.ownerId === owner);
          const firstWaiting = mine.findIndex((e) => !e.admissible);
          if (firstWaiting >= 0)
            expect(mine.slice(firstWaiting).some((e) => e.admissible)).toBe(false);
        }

        // the input order does not matter
        expect(planAdmission([...running].reverse(), [...queued].reverse(), limits)).toEqual(plan);
      }),
      { numRuns: 300 },
    );
  });

  it('a queue with runs finishing in any order drains completely, FIFO per owner, within the limits', () => {
    fc.assert(
      fc.property(
        queuedArb,
        limitsArb,
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        (arrivals, limits, picks) => {
          // Repeated passes: each pass admits, then one running run (chosen by `picks`) finishes.
          const queued = [...arrivals];
          const running: AdmissionRun[] = [];
          const started: AdmissionRun[] = [];
          let pick = 0;
          for (let pass = 0; pass < arrivals.length * 2 + 2; pass++) {
            const plan = planAdmission(running, queued, limits);
            for (const run of plan.admit) {
              running.push(run);
              started.push(run);
              queued.splice(
                queued.findIndex((q) => q.runId === run.runId),
                1,
              );
            }
            expect(running.length).toBeLessThanOrEqual(limits.maxRunning);
            for (const n of countBy(running.map((r) => r.ownerId)).values()) {
              expect(n).toBeLessThanOrEqual(limits.maxRunningPerOwner);
            }
            if (running.length > 0) {
              running.splice((picks[pick++ % picks.length] ?? 0) % running.length, 1);
            }
          }
          // no starvation: everything started
          expect(queued).toEqual([]);
          expect(started).toHaveLength(arrivals.length);
          // FIFO per owner
          for (const owner of OWNERS) {
            const mine = started.filter((r) => r.ownerId === owner);
            expect(mine).toEqual([...mine].sort(compareCreationOrder));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
