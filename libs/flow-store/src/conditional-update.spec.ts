import type { FlowRun } from '@tda/contracts';
import { stepPatch } from '@tda/flow-engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_PATCH_REASON,
  type UpdateDecision,
  backoffDelayMs,
  updateWithRetry,
} from './conditional-update';
import {
  ConflictRetriesExhaustedError,
  RunNotFoundError,
  VersionConflictError,
} from './flow-store.errors';
import type { FlowRunStore, VersionedRun } from './flow-run-store.port';
import { InMemoryFlowRunStore } from './in-memory-flow-run.store';
import { KeyedMutex } from './keyed-mutex';
import { makeFlowRun, makeParallelSteps, makeStep } from './testing';

type StoreLike = Pick<FlowRunStore, 'get' | 'update'>;
type UpdateCall = { runId: string; patch: Readonly<Record<string, unknown>>; version: string };

/**
 * A scripted store: `get` answers from `reads` in order (the last one repeats), `update` runs the
 * next scripted reaction (the last one repeats) and records every call.
 */
function scriptedStore(
  reads: Array<VersionedRun | null>,
  reactions: Array<(call: UpdateCall) => VersionedRun>,
): StoreLike & { gets: number; updates: UpdateCall[] } {
  const fake = {
    gets: 0,
    updates: [] as UpdateCall[],
    async get(): Promise<VersionedRun | null> {
      const read = reads[Math.min(fake.gets, reads.length - 1)];
      fake.gets += 1;
      return read === undefined || read === null ? null : structuredClone(read);
    },
    async update(
      runId: string,
      patch: Readonly<Record<string, unknown>>,
      version: string,
    ): Promise<VersionedRun> {
      const call = { runId, patch, version };
      const react = reactions[Math.min(fake.updates.length, reactions.length - 1)];
      fake.updates.push(call);
      if (react === undefined) throw new Error('no scripted reaction');
      return react(call);
    },
  };
  return fake;
}

const conflict = (call: UpdateCall): never => {
  throw new VersionConflictError(call.runId, call.version);
};
const accept =
  (version: string) =>
  (call: UpdateCall): VersionedRun => ({
    run: makeFlowRun({ ownerId: `written-at-${call.version}` }),
    version,
  });

const steps = makeParallelSteps(2);
const base = makeFlowRun({ steps });
const runId = base.runId;
const v1: VersionedRun = { run: base, version: 'v1' };
// Another writer claimed step v1 in between.
const v2: VersionedRun = {
  run: { ...base, steps: { ...steps, 'ohlcv_export:1d:v1': makeStep(running()) } },
  version: 'v2',
};

function running(): { status: 'RUNNING'; attempt: number } {
  return { status: 'RUNNING', attempt: 1 };
}

/** Claims `stepId` if it is READY. */
function claim(stepId: string) {
  return (run: FlowRun, version: string): UpdateDecision<string> =>
    run.steps[stepId]?.status === 'READY'
      ? { kind: 'write', patch: stepPatch(stepId, running()), result: `claimed@${version}` }
      : { kind: 'noop', reason: 'not_ready', result: `skipped@${version}` };
}

const noSleep = { sleep: async () => undefined };

describe('updateWithRetry', () => {
  it('re-reads and re-decides after a conflict, writing with the new version', async () => {
    const store = scriptedStore([v1, v2], [conflict, accept('v3')]);
    const seen: string[] = [];
    const decide = (run: FlowRun, version: string): UpdateDecision<string> => {
      seen.push(`${version}:${run.steps['ohlcv_export:1d:v1']?.status}`);
      return claim('ohlcv_export:1d:v0')(run, version);
    };
    const sleeps: number[] = [];
    const outcome = await updateWithRetry(store, runId, decide, {
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });

    expect(seen).toEqual(['v1:READY', 'v2:RUNNING']);
    expect(store.updates.map((u) => u.version)).toEqual(['v1', 'v2']);
    expect(store.updates[1]?.patch).toEqual(stepPatch('ohlcv_export:1d:v0', running()));
    expect(outcome).toEqual({
      kind: 'written',
      result: 'claimed@v2',
      run: makeFlowRun({ ownerId: 'written-at-v2' }),
      version: 'v3',
      attempts: 2,
    });
    expect(sleeps).toEqual([10]);
  });

  it('stops with noop when the re-read shows the work is already done', async () => {
    const store = scriptedStore([v1, v2], [conflict]);
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v1'), noSleep);
    expect(outcome).toEqual({
      kind: 'noop',
      reason: 'not_ready',
      result: 'skipped@v2',
      attempts: 2,
    });
    expect(store.updates).toHaveLength(1);
  });

  it('does not write when the first decision is a noop', async () => {
    const store = scriptedStore([v2], [accept('never')]);
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v1'), noSleep);
    expect(outcome).toMatchObject({ kind: 'noop', reason: 'not_ready', attempts: 1 });
    expect(store.updates).toHaveLength(0);
  });

  it('treats an empty patch as a noop and writes nothing', async () => {
    const store = scriptedStore([v1], [accept('never')]);
    const outcome = await updateWithRetry(
      store,
      runId,
      () => ({ kind: 'write', patch: {}, result: 42 }),
      noSleep,
    );
    expect(outcome).toEqual({ kind: 'noop', reason: EMPTY_PATCH_REASON, result: 42, attempts: 1 });
    expect(store.updates).toHaveLength(0);
  });

  it('returns not_found without calling decide when the run does not exist', async () => {
    const store = scriptedStore([null], [accept('never')]);
    let decided = false;
    const outcome = await updateWithRetry(store, runId, () => {
      decided = true;
      return { kind: 'noop', reason: 'x', result: null };
    });
    expect(outcome).toEqual({ kind: 'not_found' });
    expect(decided).toBe(false);
  });

  it('returns not_found when the run disappears between read and write', async () => {
    const gone = (call: UpdateCall): never => {
      throw new RunNotFoundError(call.runId);
    };
    const store = scriptedStore([v1], [gone]);
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), noSleep);
    expect(outcome).toEqual({ kind: 'not_found' });
  });

  it('throws ConflictRetriesExhaustedError after maxAttempts lost races', async () => {
    const store = scriptedStore([v1], [conflict]);
    const sleeps: number[] = [];
    const error = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), {
      maxAttempts: 4,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConflictRetriesExhaustedError);
    expect(error).toMatchObject({ code: 'CONFLICT', retryable: true, attempts: 4, runId });
    expect(store.gets).toBe(4);
    expect(store.updates).toHaveLength(4);
    expect(sleeps).toEqual([10, 20, 40]);
  });

  it('defaults to 8 attempts with exponential backoff capped at 1 s', async () => {
    const store = scriptedStore([v1], [conflict]);
    const sleeps: number[] = [];
    await expect(
      updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), {
        random: () => 0.999_999,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
      }),
    ).rejects.toBeInstanceOf(ConflictRetriesExhaustedError);
    expect(store.updates).toHaveLength(8);
    expect(sleeps).toEqual([19, 39, 79, 159, 319, 639, 999]);
  });

  it('propagates other errors without retrying', async () => {
    const boom = (): never => {
      throw new Error('unavailable');
    };
    const store = scriptedStore([v1], [boom]);
    await expect(
      updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), noSleep),
    ).rejects.toThrow('unavailable');
    expect(store.updates).toHaveLength(1);
  });
});

describe('updateWithRetry from a known snapshot', () => {
  it('decides on the known run and writes without reading when it is current', async () => {
    const store = scriptedStore([v2], [accept('v2b')]);
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), {
      ...noSleep,
      known: v1,
    });
    expect(store.gets).toBe(0);
    expect(store.updates.map((u) => u.version)).toEqual(['v1']);
    expect(outcome).toMatchObject({ kind: 'written', result: 'claimed@v1', attempts: 1 });
  });

  it('reads and decides again, at once and without counting an attempt, when it is stale', async () => {
    const store = scriptedStore([v2], [conflict, accept('v3')]);
    const sleeps: number[] = [];
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v0'), {
      known: v1,
      maxAttempts: 1,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    expect(store.gets).toBe(1);
    expect(store.updates.map((u) => u.version)).toEqual(['v1', 'v2']);
    expect(outcome).toMatchObject({ kind: 'written', result: 'claimed@v2', attempts: 1 });
    expect(sleeps).toEqual([]);
  });

  it('does not trust a noop decided on the known run: reads and decides again', async () => {
    const store = scriptedStore([v1], [accept('v3')]);
    const outcome = await updateWithRetry(store, runId, claim('ohlcv_export:1d:v1'), {
      ...noSleep,
      known: v2,
    });
    expect(store.gets).toBe(1);
    expect(outcome).toMatchObject({ kind: 'written', result: 'claimed@v1', attempts: 1 });
  });
});

describe('updateWithRetry with turns', () => {
  const ready = makeFlowRun({ steps: makeParallelSteps(2) });

  async function claimBoth(turns?: KeyedMutex) {
    const store = new InMemoryFlowRunStore();
    await store.create(ready);
    const options = { ...noSleep, ...(turns === undefined ? {} : { turns }) };
    return Promise.all(
      ['ohlcv_export:1d:v0', 'ohlcv_export:1d:v1'].map((stepId) =>
        updateWithRetry(store, ready.runId, claim(stepId), options),
      ),
    );
  }

  it('two writers of one run in one process race without turns: one loses a precondition', async () => {
    const outcomes = await claimBoth();
    expect(outcomes.map((o) => (o.kind === 'written' ? o.attempts : 0)).sort()).toEqual([1, 2]);
  });

  it('with turns the second reads what the first wrote: both written at the first attempt', async () => {
    const outcomes = await claimBoth(new KeyedMutex());
    expect(outcomes.map((o) => [o.kind, o.kind === 'written' ? o.attempts : 0])).toEqual([
      ['written', 1],
      ['written', 1],
    ]);
  });
});

describe('backoffDelayMs', () => {
  it('stays within [0, min(cap, base * 2^(attempt-1))) for any random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const delay = backoffDelayMs(attempt, () => draw);
          const ceiling = Math.min(1_000, 20 * 2 ** (attempt - 1));
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(ceiling);
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });

  it('spreads delays over the whole window (full jitter)', () => {
    expect(backoffDelayMs(3, () => 0)).toBe(0);
    expect(backoffDelayMs(3, () => 0.5)).toBe(40);
    expect(backoffDelayMs(3, () => 0.999)).toBe(79);
    expect(backoffDelayMs(10, () => 0.5, 20, 1_000)).toBe(500);
  });
});
