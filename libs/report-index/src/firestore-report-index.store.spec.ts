import { GrpcStatus } from '@google-cloud/firestore';
import { failingFirestore, grpcError } from '@tda/flow-store/testing';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreReportIndexStore } from './firestore-report-index.store';
import { IndexStoreUnavailableError } from './report-index.errors';
import { makeRecommendationEntry, makeReportEntry } from './testing';

/** The adapter's error mapping, without an emulator. */
describe('FirestoreReportIndexStore errors', () => {
  it('maps transient gRPC statuses to a retryable UPSTREAM_UNAVAILABLE on every call', async () => {
    const store = new FirestoreReportIndexStore(
      failingFirestore(() => grpcError(GrpcStatus.UNAVAILABLE)),
    );
    const calls = [
      store.createReport(makeReportEntry()),
      store.createRecommendation(makeRecommendationEntry()),
      store.getReport(makeReportEntry().reportId),
      store.getRecommendation(makeRecommendationEntry().recoId),
      store.listReports({ ownerId: 'alice', limit: 5 }),
      store.listRecommendations({ ownerId: 'alice', limit: 5, minStrength: 0.5 }),
    ];
    for (const call of calls) {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(IndexStoreUnavailableError);
      expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    }
  });

  it('passes other failures through unchanged (a permission problem is not transient)', async () => {
    const denied = grpcError(GrpcStatus.PERMISSION_DENIED);
    const store = new FirestoreReportIndexStore(failingFirestore(() => denied));
    expect(await rejectionOf(store.createReport(makeReportEntry()))).toBe(denied);
  });
});
