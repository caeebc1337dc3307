import { validate, type FlowRun, type Timeframe } from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRun } from '../catalogue';
import { findGraphIssues } from '../dag';
import { applyPatch } from '../patch';
import { seededRandom, T0 } from '../testing/run-fixtures';
import { expandIndicatorRequests, type ExpansionDecision } from './expand-indicators';
import { INDICATOR_CATALOGUE, INDICATOR_NAMES } from './indicator-catalogue';

/** Flow 4: OHLCV 1w/1d/4h → charts → reports → the recommendation (+ the account). */
const RUN: FlowRun = createRun({
  flowKey: 'recommendation_with_account_v1',
  scope: { symbol: 'BTC-USDT', accountId: 'demo', asOf: '2026-09-20T00:00:00Z' },
  ownerId: 'alice',
  trigger: { type: 'USER', source: 'test' },
  now: T0,
  random: seededRandom(1),
});
const REPORTS = Object.keys(RUN.steps).filter((id) => id.startsWith('llm_report:'));
const TIMEFRAMES: Timeframe[] = ['1w', '1d', '4h'];
const NOW = new Date(T0.getTime() + 60_000);

/** An indicator with parameters inside the catalogue's bounds. */
const indicatorArb = fc.constantFrom(...INDICATOR_NAMES).chain((name) => {
  const params = INDICATOR_CATALOGUE[name]?.params ?? {};
  return fc
    .record(
      Object.fromEntries(
        Object.entries(params).map(([key, b]) => [
          key,
          b.integer
            ? fc.integer({ min: b.min, max: b.max })
            : fc.double({ min: b.min, max: b.max, noNaN: true }),
        ]),
      ),
    )
    .filter((p) => INDICATOR_CATALOGUE[name]?.check?.(p as Record<string, number>) === undefined)
    .map((p) => ({ name, params: p }));
});
const requestsArb = fc
  .uniqueArray(fc.constantFrom(...TIMEFRAMES), { minLength: 1, maxLength: 3 })
  .chain((tfs) =>
    fc.tuple(
      ...tfs.map((tf) =>
        fc
          .array(indicatorArb, { minLength: 1, maxLength: 4 })
          .map((indicators) => ({ timeframe: tf, indicators })),
      ),
    ),
  );

function expanded(decision: ExpansionDecision, run: FlowRun = RUN): FlowRun {
  if (decision.kind !== 'expand') throw new Error(`expected an expansion, got ${decision.kind}`);
  return applyPatch(run, decision.patch);
}

describe('expandIndicatorRequests (flow 5)', () => {
  it('property: acyclic, deterministic, idempotent under a duplicated event, wired as described', () => {
    fc.assert(
      fc.property(fc.constantFrom(...REPORTS), requestsArb, (stepId, requests) => {
        const first = expandIndicatorRequests(RUN, stepId, requests, NOW);
        const again = expandIndicatorRequests(RUN, stepId, requests, NOW);
        expect(again).toEqual(first);
        const run = expanded(first);
        expect(findGraphIssues(run.steps)).toEqual([]);
        expect(expandIndicatorRequests(run, stepId, requests, NOW)).toEqual({
          kind: 'noop',
          reason: 'already_expanded',
        });
        if (first.kind !== 'expand') return;
        const followUp = first.added.at(-1) ?? '';
        const indicatorSteps = first.added.slice(0, -1);
        expect(indicatorSteps).toHaveLength(requests.length);
        const requesting = RUN.steps[stepId];
        expect(run.steps[followUp]?.dependsOn).toEqual([
          ...(requesting?.dependsOn ?? []),
          stepId,
          ...indicatorSteps,
        ]);
        expect(run.steps[followUp]?.inputs).toMatchObject({
          llm: requesting?.inputs['llm'],
          indicatorStepIds: indicatorSteps,
          previousReportStepIds: expect.arrayContaining([stepId]) as unknown,
        });
        expect(validate.flowRun(run).ok).toBe(true);
        for (const id of first.added) expect(run.steps[id]?.addedBy).toEqual({ stepId, depth: 1 });
        for (const id of indicatorSteps) {
          const tf = run.steps[id]?.timeframe;
          expect(run.steps[id]?.dependsOn).toEqual([`ohlcv_export:${String(tf)}`]);
          expect(id).toMatch(/^indicators_on_demand:(1w|1d|4h):req_[0-9a-f]{10}$/);
        }
        // What waited for the first answer now waits for the follow-up and reads it instead.
        for (const [id, step] of Object.entries(RUN.steps)) {
          if (!step.dependsOn.includes(stepId)) continue;
          expect(run.steps[id]?.dependsOn).toContain(followUp);
          expect(JSON.stringify(run.steps[id]?.inputs)).not.toContain(`"${stepId}"`);
          expect(JSON.stringify(run.steps[id]?.inputs)).toContain(`"${followUp}"`);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('bounds the depth and the number of dynamic steps with EXPANSION_LIMIT_EXCEEDED', () => {
    const request = [{ timeframe: '1d', indicators: [{ name: 'RSI' }] }];
    const report = REPORTS[0] ?? '';
    const first = expandIndicatorRequests(RUN, report, request, NOW);
    const run = expanded(first);
    const followUp = first.kind === 'expand' ? (first.added.at(-1) ?? '') : '';
    const deeper = expandIndicatorRequests(run, followUp, request, NOW);
    expect(deeper).toMatchObject({
      kind: 'refused',
      error: { code: 'EXPANSION_LIMIT_EXCEEDED', details: { depth: 2, maxDepth: 1 } },
    });
    expect(
      expandIndicatorRequests(run, followUp, request, NOW, { maxDepth: 2, maxDynamicSteps: 12 })
        .kind,
    ).toBe('expand');
    const crowded = expandIndicatorRequests(run, REPORTS[1] ?? '', request, NOW, {
      maxDepth: 1,
      maxDynamicSteps: 3,
    });
    expect(crowded).toMatchObject({
      kind: 'refused',
      error: {
        code: 'EXPANSION_LIMIT_EXCEEDED',
        details: { dynamicSteps: 2, adding: 2, maxDynamicSteps: 3 },
      },
    });
  });

  it.each([
    [
      'an unknown indicator',
      [{ timeframe: '1d', indicators: [{ name: 'ICHIMOKU' }] }],
      /unknown indicator/,
    ],
    [
      'a parameter out of range',
      [{ timeframe: '1d', indicators: [{ name: 'RSI', params: { period: 1000 } }] }],
      /RSI.period must be an integer in 2..100/,
    ],
    [
      'an unknown parameter',
      [{ timeframe: '1d', indicators: [{ name: 'EMA', params: { length: 5 } }] }],
      /unknown parameter/,
    ],
    [
      'MACD fast above slow',
      [{ timeframe: '1d', indicators: [{ name: 'MACD', params: { fast: 30, slow: 20 } }] }],
      /fast must be below slow/,
    ],
    [
      'a timeframe the run does not have',
      [{ timeframe: '1h', indicators: [{ name: 'RSI' }] }],
      /not one of the run's/,
    ],
    ['an empty request', [], /non-empty/],
    ['not an array', { timeframe: '1d' }, /non-empty array/],
  ])(
    'refuses %s with a sanitized INVALID_STRUCTURED_OUTPUT, adding nothing',
    (_name, requests, message) => {
      const decision = expandIndicatorRequests(RUN, REPORTS[0] ?? '', requests, NOW);
      expect(decision).toMatchObject({
        kind: 'refused',
        error: { code: 'INVALID_STRUCTURED_OUTPUT', retryable: false },
      });
      if (decision.kind === 'refused') expect(decision.error.message).toMatch(message);
    },
  );

  it('never echoes a hostile name in full', () => {
    const hostile = `RSI<script>${'x'.repeat(500)}`;
    const decision = expandIndicatorRequests(
      RUN,
      REPORTS[0] ?? '',
      [{ timeframe: '1d', indicators: [{ name: hostile }] }],
      NOW,
    );
    expect(JSON.stringify(decision).length).toBeLessThan(900);
    expect(JSON.stringify(decision)).not.toContain('x'.repeat(100));
  });
});
