import type { RecommendationEvaluation } from '@tda/contracts';
import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EvaluationNotFoundError,
  EvaluationVersionConflictError,
  InvalidEvaluationError,
} from '../evaluation-documents';
import type { EvaluationStore } from '../evaluation-store.port';
import { InvalidScheduleListQueryError } from '../schedule-store.errors';

export interface EvaluationStoreHandle {
  store: EvaluationStore;
  cleanup: () => Promise<void>;
}

let counter = 0;

/** A valid evaluation with a fresh id (ids are 20 base-36 characters). */
export function makeEvaluation(
  overrides: Partial<RecommendationEvaluation> = {},
): RecommendationEvaluation {
  counter += 1;
  const suffix = `${counter.toString(36)}${Date.now().toString(36)}`.padEnd(20, '0').slice(0, 20);
  return {
    schemaVersion: 1,
    evaluationId: `evl_${suffix}`,
    ownerId: 'user-1',
    flowKey: 'recommendation_with_account_v1',
    symbol: 'BTC-USDT',
    from: '2026-08-01T00:00:00Z',
    to: '2026-08-08T00:00:00Z',
    every: '1w',
    scope: { accountId: 'demo' },
    costs: { feeBps: 10, slippageBps: 5 },
    window: 2,
    points: [{ asOf: '2026-08-01T00:00:00Z' }, { asOf: '2026-08-08T00:00:00Z' }],
    createdAt: '2026-11-26T03:00:00.000Z',
    updatedAt: '2026-11-26T03:00:00.000Z',
    ...overrides,
  };
}

/**
 * The semantics every EvaluationStore adapter shares (evaluation-store.port.ts), on the
 * in-memory adapter in a unit spec and on Firestore (emulator) in an int-spec.
 */
export function describeEvaluationStoreConformance(
  name: string,
  open: () => Promise<EvaluationStoreHandle>,
): void {
  describe(`EvaluationStore conformance: ${name}`, () => {
    let handle: EvaluationStoreHandle;
    beforeEach(async () => {
      handle = await open();
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    it('createOnce creates once; a second create is "exists" and changes nothing', async () => {
      const evaluation = makeEvaluation();
      expect(await handle.store.createOnce(evaluation)).toBe('created');
      expect((await handle.store.get(evaluation.evaluationId))?.evaluation).toEqual(evaluation);
      const other = { ...evaluation, window: 5 };
      expect(await handle.store.createOnce(other)).toBe('exists');
      expect((await handle.store.get(evaluation.evaluationId))?.evaluation.window).toBe(2);
    });

    it('refuses an invalid document and writes nothing; a malformed id is not found', async () => {
      const bad = makeEvaluation({ window: 0 });
      expect(await rejectionOf(handle.store.createOnce(bad))).toBeInstanceOf(
        InvalidEvaluationError,
      );
      expect(await handle.store.get(bad.evaluationId)).toBeNull();
      expect(await handle.store.get('evl_nope')).toBeNull();
    });

    it('update applies points and the cancel at the version read, then refuses that version', async () => {
      const evaluation = makeEvaluation();
      await handle.store.createOnce(evaluation);
      const read = await handle.store.get(evaluation.evaluationId);
      const points: RecommendationEvaluation['points'] = [
        { asOf: '2026-08-01T00:00:00Z', runId: '20261126-030000_BTC-USDT_a1b2c' },
        { asOf: '2026-08-08T00:00:00Z' },
      ];
      const written = await handle.store.update(
        evaluation.evaluationId,
        { points, cancelRequestedAt: '2026-11-26T03:01:00.000Z' },
        read?.version ?? '',
      );
      expect(written.evaluation.points).toEqual(points);
      expect(written.evaluation.cancelRequestedAt).toBe('2026-11-26T03:01:00.000Z');
      expect((await handle.store.get(evaluation.evaluationId))?.evaluation).toEqual(
        written.evaluation,
      );
      expect(
        await rejectionOf(handle.store.update(evaluation.evaluationId, {}, read?.version ?? '')),
      ).toBeInstanceOf(EvaluationVersionConflictError);
      expect(
        await rejectionOf(handle.store.update(makeEvaluation().evaluationId, {}, '1')),
      ).toBeInstanceOf(EvaluationNotFoundError);
    });

    it('two updates from the same version: one wins, the other conflicts', async () => {
      const evaluation = makeEvaluation();
      await handle.store.createOnce(evaluation);
      const read = await handle.store.get(evaluation.evaluationId);
      const outcomes = await Promise.allSettled([
        handle.store.update(
          evaluation.evaluationId,
          { points: evaluation.points },
          read?.version ?? '',
        ),
        handle.store.update(
          evaluation.evaluationId,
          { points: evaluation.points },
          read?.version ?? '',
        ),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    });

    it("lists one owner's evaluations, newest first, in keyset pages", async () => {
      const owner = `owner-${Date.now().toString(36)}`;
      const times = [
        '2026-11-26T03:00:01.000Z',
        '2026-11-26T03:00:03.000Z',
        '2026-11-26T03:00:02.000Z',
      ];
      const created = times.map((createdAt) => makeEvaluation({ ownerId: owner, createdAt }));
      for (const e of [...created, makeEvaluation({ ownerId: `${owner}-other` })]) {
        await handle.store.createOnce(e);
      }
      const first = await handle.store.list({ ownerId: owner, limit: 2 });
      expect(first.evaluations.map((e) => e.createdAt)).toEqual([times[1], times[2]]);
      const second = await handle.store.list({
        ownerId: owner,
        limit: 2,
        cursor: first.nextCursor ?? '',
      });
      expect(second.evaluations.map((e) => e.createdAt)).toEqual([times[0]]);
      expect(second.nextCursor).toBeNull();
      expect(
        await rejectionOf(handle.store.list({ ownerId: owner, limit: 2, cursor: 'garbage' })),
      ).toBeInstanceOf(InvalidScheduleListQueryError);
    });
  });
}
