import type { ReportIndexEntry, Timeframe } from '@tda/contracts';
import type { ReportIndexStore } from './report-index-store.port';

export interface LatestReportsQuery {
  ownerId: string;
  symbolKey: string;
  timeframes: readonly Timeframe[];
  /** The moment to look back from (RFC 3339): reports describing a later moment are ignored. */
  asOf: string;
}

/**
 * Flow 3's input ("the latest report per timeframe for the symbol at or before asOf"): one
 * indexed query of one entry per timeframe, never a scan. A timeframe without such a report is
 * absent from the answer.
 */
export async function latestReportsByTimeframe(
  store: Pick<ReportIndexStore, 'listReports'>,
  query: LatestReportsQuery,
): Promise<Partial<Record<Timeframe, ReportIndexEntry>>> {
  const pages = await Promise.all(
    query.timeframes.map((timeframe) =>
      store.listReports({
        ownerId: query.ownerId,
        symbolKey: query.symbolKey,
        timeframe,
        asOfAtOrBefore: query.asOf,
        limit: 1,
      }),
    ),
  );
  const latest: Partial<Record<Timeframe, ReportIndexEntry>> = {};
  query.timeframes.forEach((timeframe, i) => {
    const entry = pages[i]?.reports[0];
    if (entry !== undefined) latest[timeframe] = entry;
  });
  return latest;
}
