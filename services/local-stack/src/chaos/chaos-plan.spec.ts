import { describe, expect, it } from 'vitest';
import {
  FAULT_KINDS,
  FLOW1_STEP_IDS,
  planChaos,
  streamRandom,
  type PlanOptions,
} from './chaos-plan';

const options: PlanOptions = {
  seed: 20_251_122,
  runs: 16,
  kills: 2,
  finalizeFailures: 3,
  ownerPrefix: 'chaos-t',
};

describe('planChaos', () => {
  it('is a pure function of the seed', () => {
    expect(planChaos(options)).toEqual(planChaos(options));
    expect(planChaos({ ...options, seed: 7 })).not.toEqual(planChaos(options));
  });

  it('plans every fault kind, one owner per run, the kills last and alone', () => {
    for (const seed of [1, 2, 3, 42, 20_251_122]) {
      const plan = planChaos({ ...options, seed });
      expect(plan.runs.map((r) => r.index)).toEqual([...Array(16).keys()]);
      expect(new Set(plan.runs.map((r) => r.ownerId)).size).toBe(16);
      const small = planChaos({ ...options, seed, runs: 10 });
      for (const kind of FAULT_KINDS)
        expect(small.runs.some((r) => r.faults.includes(kind))).toBe(true);
      for (const kind of FAULT_KINDS) {
        expect(
          plan.runs.some((r) => r.faults.includes(kind)),
          `${kind} (seed ${seed})`,
        ).toBe(true);
      }
      const kills = plan.runs.filter((r) => r.faults.includes('worker_killed'));
      expect(kills.map((r) => r.index)).toEqual([14, 15]);
      for (const run of kills) {
        expect(run.faults).toEqual(['worker_killed']);
        expect(run.kill).toBeDefined();
      }
      // One kill during the model call, one after the artifact write (seeded order).
      expect(kills.map((r) => r.kill?.moment).sort()).toEqual(['before_finalize', 'model_call']);
    }
  });

  it('expects exactly one FAILED (persistent hang) and one CANCELLED (cancel) run, each with that fault only', () => {
    for (let seed = 0; seed < 40; seed += 1) {
      const plan = planChaos({ ...options, seed, runs: seed % 2 === 0 ? 10 : 16 });
      const failed = plan.runs.filter((r) => r.expected === 'FAILED');
      const cancelled = plan.runs.filter((r) => r.expected === 'CANCELLED');
      expect(failed).toHaveLength(1);
      expect(cancelled).toHaveLength(1);
      expect(failed[0]?.faults).toEqual(['model_hang']);
      expect(failed[0]?.hang?.mode).toBe('persistent');
      expect(cancelled[0]?.faults).toEqual(['conflicting_writer']);
      expect(cancelled[0]?.writer?.mode).toBe('cancel');
      const others = plan.runs.filter((r) => r.expected === 'SUCCEEDED');
      // The other variants of those two faults are in the plan too.
      expect(others.some((r) => r.writer?.mode === 'touch')).toBe(true);
      expect(others.some((r) => r.hang?.mode === 'transient')).toBe(true);
      expect(
        others.every((r) => r.hang?.mode !== 'persistent' && r.writer?.mode !== 'cancel'),
      ).toBe(true);
    }
  });

  it('fills in the parameters of every planned fault, model faults on different report steps', () => {
    for (let seed = 0; seed < 50; seed += 1) {
      for (const run of planChaos({ ...options, seed }).runs) {
        expect(run.faults.length).toBeGreaterThanOrEqual(1);
        expect(run.faults.length).toBeLessThanOrEqual(2);
        expect(run.faults.includes('duplicate_reorder')).toBe(run.duplicates !== undefined);
        expect(run.faults.includes('orchestrator_crash')).toBe(run.crash !== undefined);
        expect(run.faults.includes('conflicting_writer')).toBe(run.writer !== undefined);
        expect(run.faults.includes('finalize_write_failed')).toBe(
          run.finalizeFailure !== undefined,
        );
        expect(run.faults.includes('model_hang')).toBe(run.hang !== undefined);
        expect(run.faults.includes('model_bad_output')).toBe(run.badOutput !== undefined);
        if (run.crash !== undefined) expect(FLOW1_STEP_IDS).toContain(run.crash.stepId);
        if (run.finalizeFailure !== undefined) {
          expect(run.finalizeFailure.stepId).toMatch(/^(ohlcv_export|charts):/);
          expect(run.finalizeFailure.failures).toBe(3);
        }
        if (run.hang !== undefined && run.badOutput !== undefined) {
          expect(run.hang.timeframe).not.toBe(run.badOutput.timeframe);
        }
      }
    }
  });

  it('refuses a plan too small to hold every fault', () => {
    expect(() => planChaos({ ...options, runs: 9 })).toThrow(/at least 8 runs besides the kills/);
    expect(planChaos({ ...options, runs: 10 }).runs).toHaveLength(10);
  });
});

describe('streamRandom', () => {
  it('gives the same sequence for the same seed and name, another one for another name', () => {
    const a = streamRandom(1, 'x');
    const b = streamRandom(1, 'x');
    const c = streamRandom(1, 'y');
    const seqA = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(seqA);
    expect([c(), c(), c()]).not.toEqual(seqA);
    for (const value of seqA) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
  });
});
