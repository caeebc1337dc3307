import { Inject, Injectable } from '@nestjs/common';
import {
  TIMEFRAMES,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
  type Timeframe,
} from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';
import {
  INDEX_LIST_LIMIT_MAX,
  parseSymbolKey,
  RECOMMENDATION_ID_PATTERN,
  REPORT_ID_PATTERN,
  type RecommendationListPage,
  type RecommendationListQuery,
  type ReportIndexStore,
  type ReportListPage,
  type ReportListQuery,
} from '@tda/report-index';
import { REPORT_INDEX } from '../orchestrator.tokens';
import { DEFAULT_LIST_LIMIT, strictQuery } from '../runs/run-list-query';
import { IndexEntryNotFoundError } from './index.errors';

const REPORT_PARAMS = ['symbol', 'timeframe', 'asOf', 'limit', 'cursor'] as const;
const RECOMMENDATION_PARAMS = ['symbol', 'minStrength', 'limit', 'cursor'] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function bad(message: string, parameter: string, extra: Record<string, unknown> = {}): never {
  throw new InvalidRequestError(message, { parameter, ...extra });
}

/** limit, cursor and symbol, shared by both lists. */
function commonParams(
  values: Partial<Record<string, string>>,
  ownerId: string,
): { ownerId: string; limit: number; cursor?: string; symbolKey?: string } {
  const query: { ownerId: string; limit: number; cursor?: string; symbolKey?: string } = {
    ownerId,
    limit: DEFAULT_LIST_LIMIT,
  };
  const { limit, cursor, symbol } = values;
  if (limit !== undefined) {
    const parsed = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(parsed >= 1 && parsed <= INDEX_LIST_LIMIT_MAX)) {
      bad(`limit must be an integer in 1..${INDEX_LIST_LIMIT_MAX}`, 'limit', {
        max: INDEX_LIST_LIMIT_MAX,
      });
    }
    query.limit = parsed;
  }
  if (cursor !== undefined) {
    if (cursor === '') bad('cursor must not be empty', 'cursor');
    query.cursor = cursor;
  }
  if (symbol !== undefined) {
    const symbolKey = parseSymbolKey(symbol);
    if (symbolKey === undefined) {
      bad('symbol must be a trading symbol such as BTC-USDT, BTC/USDT or BTCUSDT', 'symbol');
    }
    query.symbolKey = symbolKey;
  }
  return query;
}

/** `GET /reports` query string -> an owner-filtered list query. Strict like GET /runs. */
export function parseReportListQuery(
  raw: Readonly<Record<string, unknown>>,
  ownerId: string,
): ReportListQuery {
  const values = strictQuery(raw, REPORT_PARAMS);
  const query: ReportListQuery = commonParams(values, ownerId);
  const { timeframe, asOf } = values;
  if (timeframe !== undefined) {
    if (!(TIMEFRAMES as readonly string[]).includes(timeframe)) {
      bad(`timeframe must be one of ${TIMEFRAMES.join(', ')}`, 'timeframe', {
        allowed: [...TIMEFRAMES],
      });
    }
    query.timeframe = timeframe as Timeframe;
  }
  if (asOf !== undefined) {
    if (!RFC3339.test(asOf) || !Number.isFinite(Date.parse(asOf))) {
      bad('asOf must be an RFC 3339 time (reports at or before it)', 'asOf', {
        example: '2026-09-20T00:00:00Z',
      });
    }
    query.asOfAtOrBefore = asOf;
  }
  return query;
}

/** `GET /recommendations` query string -> an owner-filtered list query. */
export function parseRecommendationListQuery(
  raw: Readonly<Record<string, unknown>>,
  ownerId: string,
): RecommendationListQuery {
  const values = strictQuery(raw, RECOMMENDATION_PARAMS);
  const query: RecommendationListQuery = commonParams(values, ownerId);
  const { minStrength } = values;
  if (minStrength !== undefined) {
    const parsed = /^(\d{1,3}(\.\d{1,9})?|\.\d{1,9})$/.test(minStrength)
      ? Number(minStrength)
      : Number.NaN;
    if (!(parsed >= 0 && parsed <= 1)) bad('minStrength must be a number in 0..1', 'minStrength');
    query.minStrength = parsed;
  }
  return query;
}

/**
 * The read side of the index for the API: lists filtered by the request's owner in the store
 * query, and single entries that exist for this owner only (another owner's is the same 404 as
 * an unknown id).
 */
@Injectable()
export class IndexQueries {
  constructor(@Inject(REPORT_INDEX) private readonly index: ReportIndexStore) {}

  listReports(raw: Readonly<Record<string, unknown>>, ownerId: string): Promise<ReportListPage> {
    return this.index.listReports(parseReportListQuery(raw, ownerId));
  }

  listRecommendations(
    raw: Readonly<Record<string, unknown>>,
    ownerId: string,
  ): Promise<RecommendationListPage> {
    return this.index.listRecommendations(parseRecommendationListQuery(raw, ownerId));
  }

  async getReport(reportId: string, ownerId: string): Promise<ReportIndexEntry> {
    if (!REPORT_ID_PATTERN.test(reportId)) {
      bad('reportId must look like rpt_<24 lowercase letters or digits>', 'reportId');
    }
    const entry = await this.index.getReport(reportId);
    if (entry === null || entry.ownerId !== ownerId) {
      throw new IndexEntryNotFoundError('report', reportId);
    }
    return entry;
  }

  async getRecommendation(recoId: string, ownerId: string): Promise<RecommendationIndexEntry> {
    if (!RECOMMENDATION_ID_PATTERN.test(recoId)) {
      bad('recoId must look like rec_<24 lowercase letters or digits>', 'recoId');
    }
    const entry = await this.index.getRecommendation(recoId);
    if (entry === null || entry.ownerId !== ownerId) {
      throw new IndexEntryNotFoundError('recommendation', recoId);
    }
    return entry;
  }
}
