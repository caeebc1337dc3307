import type { RecommendationEvaluation, RunStatus } from '@tda/contracts';
import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  decideTopUp,
  EVALUATION_ID_PATTERN,
  evaluationIdFor,
  evaluationIdOfSource,
  evaluationPointKey,
  evaluationState,
} from './evaluation';

const asOf = (day: number) => `2026-08-${String(day).padStart(2, '0')}T00:00:00Z`;

function evaluation(
  points: RecommendationEvaluation['points'],
  extra: Partial<RecommendationEvaluation> = {},
): RecommendationEvaluation {
  return {
    schemaVersion: 1,
    evaluationId: 'evl_aaaaaaaaaaaaaaaaaaaa',
    ownerId: 'alice',
    flowKey: 'recommendation_with_account_v1',
    symbol: 'BTC-USDT',
    from: asOf(1),
    to: asOf(5),
    every: '1d',
    scope: { accountId: 'demo' },
    costs: { feeBps: 10, slippageBps: 0 },
    window: 2,
    points,
    createdAt: '2026-11-26T00:00:00Z',
    updatedAt: '2026-11-26T00:00:00Z',
    ...extra,
  };
}

const runId = (n: number) => `20261126-000000_BTC-USDT_run${n}`;
const statuses =
  (map: Record<string, RunStatus>) =>
  (id: string): RunStatus | undefined =>
    map[id];

describe('walk-forward evaluations (pure decisions)', () => {
  it('derives the id from (owner, key) so a retried POST finds the same evaluation', () => {
    const random = () => 0.5;
    const a = evaluationIdFor('alice', 'k1', random);
    expect(a).toMatch(EVALUATION_ID_PATTERN);
    expect(evaluationIdFor('alice', 'k1', random)).toBe(a);
    expect(evaluationIdFor('bob', 'k1', random)).not.toBe(a);
    expect(evaluationIdFor('alice', undefined, Math.random)).toMatch(EVALUATION_ID_PATTERN);
    expect(evaluationIdOfSource(`evaluation:${a}`)).toBe(a);
    expect(evaluationIdOfSource('orchestrator-api')).toBeUndefined();
    expect(evaluationPointKey(a, asOf(1))).toBe(`${a}:20260801T000000Z`);
    expect(evaluationPointKey(a, '2026-08-01T00:00:00.000Z')).toBe(`${a}:20260801T000000Z`);
  });

  it('fills the window with the earliest points, and refills it as runs end', () => {
    const fresh = evaluation([1, 2, 3, 4].map((d) => ({ asOf: asOf(d) })));
    expect(validate.recommendationEvaluation(fresh).ok).toBe(true);
    expect(decideTopUp(fresh, statuses({}))).toEqual([asOf(1), asOf(2)]);
    const started = evaluation([
      { asOf: asOf(1), runId: runId(1) },
      { asOf: asOf(2), runId: runId(2) },
      { asOf: asOf(3) },
      { asOf: asOf(4) },
    ]);
    expect(
      decideTopUp(started, statuses({ [runId(1)]: 'RUNNING', [runId(2)]: 'PENDING' })),
    ).toEqual([]);
    expect(
      decideTopUp(started, statuses({ [runId(1)]: 'SUCCEEDED', [runId(2)]: 'RUNNING' })),
    ).toEqual([asOf(3)]);
    // A run it cannot see (not yet readable) counts as active: the window is never overfilled.
    expect(decideTopUp(started, statuses({ [runId(1)]: 'FAILED' }))).toEqual([asOf(3)]);
  });

  it('skips refused points, and triggers nothing after a cancel', () => {
    const refused = {
      code: 'MARKET_DATA_UNAVAILABLE' as const,
      message: 'no data',
      retryable: false,
    };
    const e = evaluation([{ asOf: asOf(1), error: refused }, { asOf: asOf(2) }]);
    expect(decideTopUp(e, statuses({}))).toEqual([asOf(2)]);
    const cancelled = { ...e, cancelRequestedAt: '2026-11-26T00:01:00Z' };
    expect(decideTopUp(cancelled, statuses({}))).toEqual([]);
  });

  it('is running until every point ended, cancelled once a cancel has no active run left', () => {
    const e = evaluation([
      { asOf: asOf(1), runId: runId(1) },
      { asOf: asOf(2), runId: runId(2) },
    ]);
    expect(evaluationState(e, statuses({ [runId(1)]: 'SUCCEEDED', [runId(2)]: 'RUNNING' }))).toBe(
      'running',
    );
    expect(evaluationState(e, statuses({ [runId(1)]: 'SUCCEEDED', [runId(2)]: 'FAILED' }))).toBe(
      'completed',
    );
    expect(evaluationState(evaluation([{ asOf: asOf(1) }]), statuses({}))).toBe('running');
    const cancelled = { ...e, cancelRequestedAt: '2026-11-26T00:01:00Z' };
    expect(evaluationState(cancelled, statuses({ [runId(1)]: 'RUNNING' }))).toBe('running');
    expect(
      evaluationState(cancelled, statuses({ [runId(1)]: 'CANCELLED', [runId(2)]: 'SUCCEEDED' })),
    ).toBe('cancelled');
  });
});
