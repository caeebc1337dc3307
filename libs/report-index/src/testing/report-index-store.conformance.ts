import type { RecommendationIndexEntry, ReportIndexEntry } from '@tda/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { latestReportsByTimeframe } from '../latest-reports';
import {
  InvalidIndexCursorError,
  InvalidIndexEntryError,
  InvalidIndexQueryError,
} from '../report-index.errors';
import type {
  RecommendationListQuery,
  ReportIndexStore,
  ReportListQuery,
} from '../report-index-store.port';
import { makeRecommendationEntry, makeReportEntry } from './report-index.fixtures';

export interface ReportIndexStoreHandle {
  store: ReportIndexStore;
  cleanup: () => Promise<void>;
}

const T0 = Date.parse('2026-09-01T00:00:00.000Z');
const HOUR = 3_600_000;
const at = (hours: number): string => new Date(T0 + hours * HOUR).toISOString();

async function expectRejection<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a ${type.name}, but the call succeeded`);
  expect(outcome.error).toBeInstanceOf(type);
  return outcome.error as E;
}

/** Follows nextCursor to the end; returns the ids of each page. */
async function allReportPages(
  store: ReportIndexStore,
  query: Omit<ReportListQuery, 'cursor'>,
  startCursor?: string,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined = startCursor;
  for (let guard = 0; guard < 200; guard += 1) {
    const page = await store.listReports({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.reports.map((r) => r.reportId));
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not terminate');
}

async function allRecommendationIds(
  store: ReportIndexStore,
  query: Omit<RecommendationListQuery, 'cursor'>,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages < 200; pages += 1) {
    const page = await store.listRecommendations({
      ...query,
      ...(cursor === undefined ? {} : { cursor }),
    });
    expect(page.recommendations.length).toBeLessThanOrEqual(query.limit);
    ids.push(...page.recommendations.map((r) => r.recoId));
    if (page.nextCursor === null) return { ids, pages };
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not terminate');
}

/** Newest first as the port defines it: asOf desc, createdAt desc, id desc. */
function newestFirst<T extends { asOf: string; createdAt: string }>(
  entries: readonly T[],
  id: (entry: T) => string,
): string[] {
  return [...entries]
    .sort((a, b) =>
      a.asOf !== b.asOf
        ? b.asOf.localeCompare(a.asOf)
        : a.createdAt !== b.createdAt
          ? b.createdAt.localeCompare(a.createdAt)
          : id(b) < id(a)
            ? -1
            : 1,
    )
    .map(id);
}

/**
 * The behaviour every ReportIndexStore adapter must have (report-index-store.port.ts). Registers
 * a vitest `describe` block; `makeStore` is called before each test and returns an empty store.
 */
export function describeReportIndexStoreConformance(
  name: string,
  makeStore: () => Promise<ReportIndexStoreHandle>,
): void {
  describe(`ReportIndexStore conformance: ${name}`, () => {
    let handle: ReportIndexStoreHandle | undefined;
    let store: ReportIndexStore;

    beforeEach(async () => {
      handle = await makeStore();
      store = handle.store;
    });
    afterEach(async () => {
      await handle?.cleanup();
      handle = undefined;
    });

    describeCreateAndGet(() => store);
    describeReportLists(() => store);
    describeRecommendationLists(() => store);
  });
}

function describeCreateAndGet(storeOf: () => ReportIndexStore): void {
  it('creates a report once: a second create of the id is "exists" and changes nothing', async () => {
    const store = storeOf();
    const entry = makeReportEntry();
    expect(await store.createReport(entry)).toBe('created');
    expect(await store.getReport(entry.reportId)).toEqual(entry);
    const other = { ...entry, headline: 'a different headline' };
    expect(await store.createReport(other)).toBe('exists');
    expect(await store.getReport(entry.reportId)).toEqual(entry);
  });

  it('creates a recommendation once, the same way', async () => {
    const store = storeOf();
    const entry = makeRecommendationEntry();
    expect(await store.createRecommendation(entry)).toBe('created');
    expect(await store.createRecommendation({ ...entry, action: 'SELL' })).toBe('exists');
    expect(await store.getRecommendation(entry.recoId)).toEqual(entry);
  });

  it('stores a report without a timeframe (cross-timeframe) and without undefined fields', async () => {
    const store = storeOf();
    const entry = { ...makeReportEntry({ timeframe: undefined }), bias: undefined };
    expect(await store.createReport(entry)).toBe('created');
    const read = await store.getReport(entry.reportId);
    expect(read).not.toBeNull();
    expect(Object.keys(read ?? {})).not.toContain('timeframe');
    expect(Object.keys(read ?? {})).not.toContain('bias');
  });

  it('refuses an entry that breaks its contract or has a non-canonical instant; nothing is stored', async () => {
    const store = storeOf();
    const bad = { ...makeReportEntry({ variant: 'bad' }), symbolKey: 'btc-usdt' };
    const error = await expectRejection(store.createReport(bad), InvalidIndexEntryError);
    expect(error.code).toBe('INTERNAL_ERROR');
    expect(await store.getReport(bad.reportId)).toBeNull();
    const zulu = makeReportEntry({ variant: 'zulu', asOf: '2026-09-20T00:00:00Z' });
    await expectRejection(store.createReport(zulu), InvalidIndexEntryError);
    const reco = { ...makeRecommendationEntry(), signal_strength: 1.5 };
    await expectRejection(store.createRecommendation(reco), InvalidIndexEntryError);
    expect(await store.getRecommendation(reco.recoId)).toBeNull();
  });

  it('answers null for unknown ids and for strings that are not ids of that kind', async () => {
    const store = storeOf();
    const reco = makeRecommendationEntry();
    await store.createRecommendation(reco);
    expect(await store.getReport('rpt_000000000000000000000000')).toBeNull();
    expect(await store.getReport(reco.recoId)).toBeNull();
    for (const id of ['a/b', '..', '', 'rpt_x']) expect(await store.getReport(id)).toBeNull();
    expect(await store.getRecommendation('rec_000000000000000000000000')).toBeNull();
  });
}

function describeReportLists(storeOf: () => ReportIndexStore): void {
  /** 7 reports of alice over 3 timeframes and 2 symbols, with ties on asOf, plus bob's. */
  async function seedReports(store: ReportIndexStore): Promise<ReportIndexEntry[]> {
    const entries = [
      makeReportEntry({ variant: 'r1', timeframe: '1d', asOf: at(0), createdAt: at(1) }),
      makeReportEntry({ variant: 'r2', timeframe: '1d', asOf: at(24), createdAt: at(25) }),
      makeReportEntry({ variant: 'r3', timeframe: '1w', asOf: at(24), createdAt: at(25) }),
      makeReportEntry({ variant: 'r4', timeframe: '1w', asOf: at(24), createdAt: at(26) }),
      makeReportEntry({ variant: 'r5', timeframe: '4h', asOf: at(48), createdAt: at(49) }),
      makeReportEntry({ variant: 'r6', timeframe: undefined, asOf: at(30), createdAt: at(31) }),
      makeReportEntry({
        variant: 'r7',
        timeframe: '1d',
        symbol: 'ETH/USDT',
        symbolKey: 'ETHUSDT',
        asOf: at(12),
        createdAt: at(13),
      }),
    ];
    const bob = makeReportEntry({
      variant: 'b1',
      ownerId: 'bob',
      asOf: at(100),
      createdAt: at(100),
    });
    for (const entry of [...entries, bob]) expect(await store.createReport(entry)).toBe('created');
    return entries;
  }

  it('lists only the owner’s reports, newest first by asOf, createdAt, reportId', async () => {
    const store = storeOf();
    const entries = await seedReports(store);
    const page = await store.listReports({ ownerId: 'alice', limit: 100 });
    expect(page.reports.map((r) => r.reportId)).toEqual(newestFirst(entries, (e) => e.reportId));
    expect(page.nextCursor).toBeNull();
    const bob = await store.listReports({ ownerId: 'bob', limit: 100 });
    expect(bob.reports.map((r) => r.ownerId)).toEqual(['bob']);
    expect((await store.listReports({ ownerId: 'carol', limit: 10 })).reports).toEqual([]);
  });

  it('filters by symbolKey, timeframe and asOf at or before (inclusive), in any combination', async () => {
    const store = storeOf();
    const entries = await seedReports(store);
    const expected = (keep: (e: ReportIndexEntry) => boolean): string[] =>
      newestFirst(entries.filter(keep), (e) => e.reportId);
    const ids = async (query: Omit<ReportListQuery, 'ownerId' | 'limit'>): Promise<string[]> =>
      (await store.listReports({ ownerId: 'alice', limit: 100, ...query })).reports.map(
        (r) => r.reportId,
      );
    expect(await ids({ symbolKey: 'ETHUSDT' })).toEqual(expected((e) => e.symbolKey === 'ETHUSDT'));
    expect(await ids({ timeframe: '1w' })).toEqual(expected((e) => e.timeframe === '1w'));
    expect(await ids({ symbolKey: 'BTCUSDT', timeframe: '1d' })).toEqual(
      expected((e) => e.symbolKey === 'BTCUSDT' && e.timeframe === '1d'),
    );
    expect(await ids({ asOfAtOrBefore: at(24) })).toEqual(expected((e) => e.asOf <= at(24)));
    // Any RFC 3339 form of the instant is the same bound.
    expect(await ids({ asOfAtOrBefore: '2026-09-02T02:00:00+02:00' })).toEqual(
      expected((e) => e.asOf <= at(24)),
    );
    expect(await ids({ symbolKey: 'BTCUSDT', timeframe: '1d', asOfAtOrBefore: at(23) })).toEqual(
      expected((e) => e.symbolKey === 'BTCUSDT' && e.timeframe === '1d' && e.asOf <= at(23)),
    );
  });

  it('pages with opaque cursors: every report exactly once, in order, pages of limit', async () => {
    const store = storeOf();
    const entries = await seedReports(store);
    const pages = await allReportPages(store, { ownerId: 'alice', limit: 3 });
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(newestFirst(entries, (e) => e.reportId));
    const exact = await allReportPages(store, { ownerId: 'alice', timeframe: '1w', limit: 2 });
    expect(exact).toHaveLength(1);
  });

  it('does not repeat or skip on later pages when newer reports arrive meanwhile', async () => {
    const store = storeOf();
    const entries = await seedReports(store);
    const first = await store.listReports({ ownerId: 'alice', limit: 4 });
    await store.createReport(
      makeReportEntry({ variant: 'new', asOf: at(500), createdAt: at(500) }),
    );
    expect(first.nextCursor).not.toBeNull();
    const rest = await allReportPages(
      store,
      { ownerId: 'alice', limit: 4 },
      first.nextCursor ?? undefined,
    );
    const seen = [...first.reports.map((r) => r.reportId), ...rest.flat()];
    expect(seen).toEqual(newestFirst(entries, (e) => e.reportId));
  });

  it('answers flow 3: the latest report per timeframe at or before asOf', async () => {
    const store = storeOf();
    const entries = await seedReports(store);
    const byVariant = (v: string): string | undefined =>
      entries.find((e) => e.stepId.endsWith(`model_${v}`))?.reportId;
    const latest = await latestReportsByTimeframe(store, {
      ownerId: 'alice',
      symbolKey: 'BTCUSDT',
      timeframes: ['1d', '1w', '4h', '1M'],
      asOf: at(40),
    });
    expect(Object.keys(latest).sort()).toEqual(['1d', '1w']);
    expect(latest['1d']?.reportId).toBe(byVariant('r2'));
    expect(latest['1w']?.reportId).toBe(byVariant('r4'));
  });

  it('rejects bad queries and foreign or tampered cursors as INVALID_REQUEST', async () => {
    const store = storeOf();
    await seedReports(store);
    for (const query of [
      { ownerId: 'alice', limit: 0 },
      { ownerId: 'alice', limit: 101 },
      { ownerId: 'alice', limit: 1.5 },
      { ownerId: '', limit: 10 },
      { ownerId: 'alice', limit: 10, symbolKey: 'BTC-USDT' },
      { ownerId: 'alice', limit: 10, timeframe: '2d' },
      { ownerId: 'alice', limit: 10, asOfAtOrBefore: 'yesterday' },
    ] as ReportListQuery[]) {
      const error = await expectRejection(store.listReports(query), InvalidIndexQueryError);
      expect(error.code).toBe('INVALID_REQUEST');
    }
    const page = await store.listReports({ ownerId: 'alice', limit: 1 });
    const cursor = page.nextCursor ?? '';
    const tampered = Buffer.from(
      Buffer.from(cursor, 'base64url').toString('utf8').replace('rpt', 'rec'),
    ).toString('base64url');
    for (const bad of ['', 'not a cursor', 'e30', `${cursor}=`, tampered]) {
      await expectRejection(
        store.listReports({ ownerId: 'alice', limit: 1, cursor: bad }),
        InvalidIndexCursorError,
      );
    }
    await expectRejection(
      store.listRecommendations({ ownerId: 'alice', limit: 1, cursor }),
      InvalidIndexCursorError,
    );
  });
}

function describeRecommendationLists(storeOf: () => ReportIndexStore): void {
  /** 30 recommendations of alice, strengths cycling 0.1..0.9 (some tied on asOf), one of bob. */
  async function seedRecommendations(store: ReportIndexStore): Promise<RecommendationIndexEntry[]> {
    const entries: RecommendationIndexEntry[] = [];
    for (let i = 0; i < 30; i += 1) {
      entries.push(
        makeRecommendationEntry({
          variant: `m${i}`,
          signal_strength: [0.1, 0.3, 0.5, 0.7, 0.9][i % 5] ?? 0,
          asOf: at(Math.floor(i / 2) * 6),
          createdAt: at(Math.floor(i / 2) * 6 + (i % 2)),
          ...(i % 3 === 0 ? { symbol: 'ETHUSDT', symbolKey: 'ETHUSDT' } : {}),
        }),
      );
    }
    const bob = makeRecommendationEntry({ variant: 'bob', ownerId: 'bob', signal_strength: 1 });
    for (const e of [...entries, bob]) expect(await store.createRecommendation(e)).toBe('created');
    return entries;
  }

  it('lists only the owner’s recommendations, newest first, paged', async () => {
    const store = storeOf();
    const entries = await seedRecommendations(store);
    const { ids, pages } = await allRecommendationIds(store, { ownerId: 'alice', limit: 7 });
    expect(ids).toEqual(newestFirst(entries, (e) => e.recoId));
    expect(pages).toBe(5);
    const bob = await store.listRecommendations({ ownerId: 'bob', limit: 10 });
    expect(bob.recommendations.map((r) => r.ownerId)).toEqual(['bob']);
  });

  it('filters by minStrength (inclusive) and symbolKey while paging: all matches, once, in order', async () => {
    const store = storeOf();
    const entries = await seedRecommendations(store);
    for (const [minStrength, symbolKey, limit] of [
      [0.7, undefined, 4],
      [0.9, undefined, 1],
      [0.5, 'ETHUSDT', 2],
      [0, 'BTCUSDT', 100],
    ] as const) {
      const query = {
        ownerId: 'alice',
        limit,
        minStrength,
        ...(symbolKey === undefined ? {} : { symbolKey }),
      };
      const { ids } = await allRecommendationIds(store, query);
      const expected = entries.filter(
        (e) =>
          e.signal_strength >= minStrength &&
          (symbolKey === undefined || e.symbolKey === symbolKey),
      );
      expect(ids).toEqual(newestFirst(expected, (e) => e.recoId));
    }
    const none = await store.listRecommendations({ ownerId: 'alice', limit: 5, minStrength: 0.95 });
    expect(none).toEqual({ recommendations: [], nextCursor: null });
  });

  it('rejects a minStrength outside 0..1 and a reports cursor', async () => {
    const store = storeOf();
    await seedRecommendations(store);
    for (const minStrength of [-0.1, 1.01, Number.NaN]) {
      await expectRejection(
        store.listRecommendations({ ownerId: 'alice', limit: 5, minStrength }),
        InvalidIndexQueryError,
      );
    }
    await store.createReport(makeReportEntry());
    await store.createReport(makeReportEntry({ variant: 'b' }));
    const reports = await store.listReports({ ownerId: 'alice', limit: 1 });
    await expectRejection(
      store.listRecommendations({ ownerId: 'alice', limit: 5, cursor: reports.nextCursor ?? '' }),
      InvalidIndexCursorError,
    );
  });
}
