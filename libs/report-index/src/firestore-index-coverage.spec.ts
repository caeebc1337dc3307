import {
  FIRESTORE_INDEXES,
  indexServing,
  recordingFirestore,
  type QueryShape,
} from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreReportIndexStore } from './firestore-report-index.store';
import type { RecommendationListQuery, ReportListQuery } from './report-index-store.port';

/**
 * Every query of the Firestore index store must have a composite index in
 * deploy/firestore/firestore.indexes.json, or it fails on GCP with FAILED_PRECONDITION (the
 * emulator needs none). The shapes are recorded from the real adapter, not restated by hand.
 */

async function shapes(
  run: (store: FirestoreReportIndexStore) => Promise<unknown>,
): Promise<QueryShape[]> {
  const recorded: QueryShape[] = [];
  await run(new FirestoreReportIndexStore(recordingFirestore(recorded)));
  return recorded;
}

const REPORT_FILTERS: Omit<ReportListQuery, 'ownerId' | 'limit' | 'cursor'>[] = [
  {},
  { symbolKey: 'BTCUSDT' },
  { timeframe: '1d' },
  { symbolKey: 'BTCUSDT', timeframe: '1d' },
];

describe('deploy/firestore/firestore.indexes.json covers the report index queries', () => {
  it('records the list query: owner (+ symbolKey, timeframe), asOf <= x, asOf, createdAt, __name__ desc', async () => {
    const [shape] = await shapes((s) =>
      s.listReports({
        ownerId: 'alice',
        symbolKey: 'BTCUSDT',
        asOfAtOrBefore: '2026-01-01T00:00:00Z',
        limit: 1,
      }),
    );
    expect(shape).toEqual({
      collection: 'reports',
      equality: ['ownerId', 'symbolKey'],
      range: ['asOf'],
      orderBy: [
        { field: 'asOf', direction: 'desc' },
        { field: 'createdAt', direction: 'desc' },
        { field: '__name__', direction: 'desc' },
      ],
    });
  });

  it('has an index for every report filter combination, with and without asOfAtOrBefore', async () => {
    for (const filters of REPORT_FILTERS) {
      for (const asOf of [{}, { asOfAtOrBefore: '2026-01-01T00:00:00Z' }]) {
        const recorded = await shapes((s) =>
          s.listReports({ ownerId: 'alice', limit: 5, ...filters, ...asOf }),
        );
        for (const shape of recorded) {
          // A range filter is only servable when its field is the first one ordered by.
          expect(shape.range.every((f) => shape.orderBy[0]?.field === f)).toBe(true);
          expect(indexServing(shape) !== undefined, JSON.stringify(filters)).toBe(true);
        }
      }
    }
  });

  it('has an index for every recommendation filter combination', async () => {
    const queries: RecommendationListQuery[] = [
      { ownerId: 'alice', limit: 5 },
      { ownerId: 'alice', limit: 5, symbolKey: 'BTCUSDT' },
      { ownerId: 'alice', limit: 5, minStrength: 0.5 },
      { ownerId: 'alice', limit: 5, symbolKey: 'BTCUSDT', minStrength: 0.5 },
    ];
    for (const query of queries) {
      const recorded = await shapes((s) => s.listRecommendations(query));
      expect(recorded.length).toBeGreaterThan(0);
      for (const shape of recorded)
        expect(indexServing(shape) !== undefined, JSON.stringify(query)).toBe(true);
    }
  });

  it('has no reports or recommendations index without a query', async () => {
    const recorded = [
      ...(await Promise.all(
        REPORT_FILTERS.map((f) => shapes((s) => s.listReports({ ownerId: 'a', limit: 1, ...f }))),
      )),
      ...(await Promise.all(
        [{}, { symbolKey: 'BTCUSDT' }].map((f) =>
          shapes((s) => s.listRecommendations({ ownerId: 'a', limit: 1, ...f })),
        ),
      )),
    ].flat();
    const ours = FIRESTORE_INDEXES.filter((i) =>
      ['reports', 'recommendations'].includes(i.collectionGroup),
    );
    const unused = ours.filter(
      (index) =>
        !recorded.some(
          (shape) =>
            shape.collection === index.collectionGroup &&
            index.fields.length === shape.equality.length + 2 &&
            indexServing(shape) !== undefined,
        ),
    );
    expect(unused).toEqual([]);
    expect(ours).toHaveLength(6);
  });
});
