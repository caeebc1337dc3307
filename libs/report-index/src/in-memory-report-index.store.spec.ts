import { describe, expect, it } from 'vitest';
import { InMemoryReportIndexStore } from './in-memory-report-index.store';
import { describeReportIndexStoreConformance, makeReportEntry } from './testing';

describeReportIndexStoreConformance('in-memory', async () => ({
  store: new InMemoryReportIndexStore(),
  cleanup: async () => undefined,
}));

describe('InMemoryReportIndexStore', () => {
  it('hands out copies: changing a read entry changes nothing stored', async () => {
    const store = new InMemoryReportIndexStore();
    const entry = makeReportEntry();
    await store.createReport(entry);
    const read = await store.getReport(entry.reportId);
    if (read === null) throw new Error('not stored');
    read.headline = 'changed';
    const page = await store.listReports({ ownerId: 'alice', limit: 10 });
    (page.reports[0] ?? read).headline = 'changed too';
    expect((await store.getReport(entry.reportId))?.headline).toBe(entry.headline);
  });
});
