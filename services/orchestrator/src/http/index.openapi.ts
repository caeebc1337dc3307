import { FLOW_KEY_PATTERN, RUN_ID_PATTERN, STEP_ID_PATTERN, TIMEFRAMES } from '@tda/contracts';
import {
  INDEX_LIST_LIMIT_MAX,
  MAX_FILTERED_SCAN,
  RECOMMENDATION_ID_PATTERN,
  REPORT_ID_PATTERN,
} from '@tda/report-index';
import { BACKFILL_MAX_ITEMS, BACKFILL_MAX_PAGES } from '../index/index-backfill.service';
import { DEFAULT_LIST_LIMIT } from '../runs/run-list-query';
import { COMMON_ERRORS, OWNER_PARAM, error, json, ref, type Json } from './openapi-parts';

/*
 * The OpenAPI paths and schemas of the reports/recommendations index (GET /reports,
 * /recommendations and the admin backfill), spread into openapi.document.ts.
 */

const TIMESTAMP = { type: 'string', format: 'date-time' };
const PROVIDER = { type: 'string', enum: ['gemini', 'vertex', 'offline'] };
const SYMBOL_KEY = { type: 'string', pattern: '^[A-Z0-9]{2,40}$' };

const LIMIT_PARAM = {
  name: 'limit',
  in: 'query',
  schema: {
    type: 'integer',
    minimum: 1,
    maximum: INDEX_LIST_LIMIT_MAX,
    default: DEFAULT_LIST_LIMIT,
  },
};
const CURSOR_PARAM = {
  name: 'cursor',
  in: 'query',
  description: 'nextCursor of the previous page of the same query',
  schema: { type: 'string' },
};
const SYMBOL_PARAM = {
  name: 'symbol',
  in: 'query',
  description: 'BTC-USDT, BTC/USDT and BTCUSDT are the same symbol (matched on symbolKey)',
  schema: { type: 'string' },
};

/** The index documents (contracts/report_index, recommendation_index), abridged to types. */
export const INDEX_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  ReportIndexEntry: {
    type: 'object',
    description: 'reports/{reportId} (contracts/report_index.schema.json)',
    required: [
      'schemaVersion',
      'reportId',
      'ownerId',
      'runId',
      'stepId',
      'flowKey',
      'symbol',
      'symbolKey',
      'asOf',
      'provider',
      'modelName',
      'promptId',
      'headline',
      'createdAt',
      'gcs_uri',
    ],
    properties: {
      schemaVersion: { type: 'integer' },
      reportId: { type: 'string', pattern: REPORT_ID_PATTERN.source },
      ownerId: { type: 'string' },
      runId: { type: 'string', pattern: RUN_ID_PATTERN.source },
      stepId: { type: 'string', pattern: STEP_ID_PATTERN.source },
      flowKey: { type: 'string', pattern: FLOW_KEY_PATTERN.source },
      symbol: { type: 'string' },
      symbolKey: SYMBOL_KEY,
      timeframe: {
        type: 'string',
        enum: [...TIMEFRAMES],
        description: 'absent for a cross-timeframe report',
      },
      asOf: TIMESTAMP,
      provider: PROVIDER,
      modelName: { type: 'string' },
      promptId: { type: 'string' },
      headline: { type: 'string', maxLength: 200 },
      bias: { type: 'string', enum: ['bullish', 'bearish', 'sideways'] },
      confidence: { type: 'number', minimum: 0, maximum: 1 },
      createdAt: TIMESTAMP,
      gcs_uri: { type: 'string' },
    },
  },
  RecommendationIndexEntry: {
    type: 'object',
    description: 'recommendations/{recoId} (contracts/recommendation_index.schema.json)',
    required: [
      'schemaVersion',
      'recoId',
      'ownerId',
      'runId',
      'stepId',
      'flowKey',
      'symbol',
      'symbolKey',
      'asOf',
      'action',
      'signal_strength',
      'headline',
      'provider',
      'modelName',
      'reportIds',
      'createdAt',
      'gcs_uri',
    ],
    properties: {
      schemaVersion: { type: 'integer' },
      recoId: { type: 'string', pattern: RECOMMENDATION_ID_PATTERN.source },
      ownerId: { type: 'string' },
      runId: { type: 'string', pattern: RUN_ID_PATTERN.source },
      stepId: { type: 'string', pattern: STEP_ID_PATTERN.source },
      flowKey: { type: 'string', pattern: FLOW_KEY_PATTERN.source },
      symbol: { type: 'string' },
      symbolKey: SYMBOL_KEY,
      asOf: TIMESTAMP,
      accountId: { type: 'string' },
      action: { type: 'string', enum: ['BUY', 'SELL', 'HOLD', 'REDUCE'] },
      signal_strength: { type: 'number', minimum: 0, maximum: 1 },
      headline: { type: 'string', maxLength: 200 },
      provider: PROVIDER,
      modelName: { type: 'string' },
      reportIds: { type: 'array', items: { type: 'string', pattern: REPORT_ID_PATTERN.source } },
      createdAt: TIMESTAMP,
      gcs_uri: { type: 'string' },
    },
  },
  ReportListPage: {
    type: 'object',
    required: ['reports', 'nextCursor'],
    properties: {
      reports: { type: 'array', items: ref('ReportIndexEntry') },
      nextCursor: { type: ['string', 'null'], description: 'null when nothing more matches' },
    },
  },
  RecommendationListPage: {
    type: 'object',
    required: ['recommendations', 'nextCursor'],
    properties: {
      recommendations: { type: 'array', items: ref('RecommendationIndexEntry') },
      nextCursor: { type: ['string', 'null'], description: 'null when nothing more matches' },
    },
  },
  IndexBackfillRequest: {
    type: 'object',
    properties: { apply: { type: 'boolean', default: false, description: 'false: a dry run' } },
    additionalProperties: false,
  },
  IndexBackfillReport: {
    type: 'object',
    required: ['dryRun', 'scannedRuns', 'truncated', 'counts', 'items', 'itemsTruncated'],
    properties: {
      dryRun: { type: 'boolean' },
      scannedRuns: { type: 'integer' },
      truncated: { type: 'boolean', description: `more than ${BACKFILL_MAX_PAGES * 100} runs` },
      counts: {
        type: 'object',
        required: ['created', 'wouldCreate', 'alreadyIndexed', 'unreadable'],
        properties: {
          created: { type: 'integer' },
          wouldCreate: { type: 'integer' },
          alreadyIndexed: { type: 'integer' },
          unreadable: { type: 'integer' },
        },
      },
      items: {
        type: 'array',
        description: `created / would_create / unreadable entries (at most ${BACKFILL_MAX_ITEMS})`,
        items: {
          type: 'object',
          required: ['runId', 'stepId', 'kind', 'id', 'outcome'],
          properties: {
            runId: { type: 'string' },
            stepId: { type: 'string' },
            kind: { type: 'string', enum: ['report', 'recommendation'] },
            id: { type: 'string' },
            outcome: { type: 'string', enum: ['created', 'would_create', 'unreadable'] },
            reason: {
              type: 'string',
              description:
                'unreadable: missing | invalid_uri | foreign_bucket | not_json | invalid_artifact | other_step | invalid_entry',
            },
          },
        },
      },
      itemsTruncated: { type: 'boolean' },
    },
  },
};

const UPSTREAM_ERRORS = {
  '502': error('UPSTREAM_UNAVAILABLE: the index store is unavailable (retryable)'),
  ...COMMON_ERRORS,
};

const LIST_ERRORS = {
  '400': error(
    'INVALID_REQUEST: bad limit, cursor, symbol, filter or unknown parameter (details.parameter)',
  ),
  ...UPSTREAM_ERRORS,
};

export const INDEX_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/reports': {
    get: {
      operationId: 'listReports',
      summary: "The request owner's LLM reports, newest first by asOf (keyset pagination)",
      parameters: [
        OWNER_PARAM,
        SYMBOL_PARAM,
        { name: 'timeframe', in: 'query', schema: { type: 'string', enum: [...TIMEFRAMES] } },
        {
          name: 'asOf',
          in: 'query',
          description:
            'only reports describing this moment or earlier (flow 3: limit=1 per timeframe)',
          schema: TIMESTAMP,
        },
        LIMIT_PARAM,
        CURSOR_PARAM,
      ],
      responses: { '200': json(ref('ReportListPage'), 'One page'), ...LIST_ERRORS },
    },
  },
  '/reports/{reportId}': {
    get: {
      operationId: 'getReport',
      summary:
        'One report index entry; the report itself: GET /runs/{runId}/steps/{stepId}/artifact',
      parameters: [
        OWNER_PARAM,
        {
          name: 'reportId',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: REPORT_ID_PATTERN.source },
        },
      ],
      responses: {
        '200': json(ref('ReportIndexEntry'), 'The entry'),
        '400': error('INVALID_REQUEST: malformed reportId'),
        '404': error("NOT_FOUND: no such report, or another owner's"),
        ...UPSTREAM_ERRORS,
      },
    },
  },
  '/recommendations': {
    get: {
      operationId: 'listRecommendations',
      summary: "The request owner's recommendations, newest first by asOf (keyset pagination)",
      description: `minStrength is applied while reading in list order: a page holds up to limit matches, or fewer with a nextCursor after ${MAX_FILTERED_SCAN} entries read.`,
      parameters: [
        OWNER_PARAM,
        SYMBOL_PARAM,
        {
          name: 'minStrength',
          in: 'query',
          description: 'only signal_strength >= minStrength',
          schema: { type: 'number', minimum: 0, maximum: 1 },
        },
        LIMIT_PARAM,
        CURSOR_PARAM,
      ],
      responses: { '200': json(ref('RecommendationListPage'), 'One page'), ...LIST_ERRORS },
    },
  },
  '/recommendations/{recoId}': {
    get: {
      operationId: 'getRecommendation',
      summary:
        'One recommendation index entry; the recommendation itself: GET /runs/{runId}/steps/{stepId}/artifact',
      parameters: [
        OWNER_PARAM,
        {
          name: 'recoId',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: RECOMMENDATION_ID_PATTERN.source },
        },
      ],
      responses: {
        '200': json(ref('RecommendationIndexEntry'), 'The entry'),
        '400': error('INVALID_REQUEST: malformed recoId'),
        '404': error("NOT_FOUND: no such recommendation, or another owner's"),
        ...UPSTREAM_ERRORS,
      },
    },
  },
  '/admin/index/backfill': {
    post: {
      operationId: 'backfillIndex',
      summary:
        'Create the missing index entries of SUCCEEDED LLM_REPORT / LLM_RECOMMENDATION steps (every owner); a dry run unless apply is true',
      requestBody: {
        required: false,
        content: { 'application/json': { schema: ref('IndexBackfillRequest') } },
      },
      responses: {
        '200': json(
          ref('IndexBackfillReport'),
          'Counts (created, wouldCreate, alreadyIndexed, unreadable) and the items',
        ),
        '400': error('INVALID_REQUEST: unknown body field, apply not a boolean'),
        '502': error(
          'UPSTREAM_UNAVAILABLE: the run store, storage or the index failed (retryable)',
        ),
        ...COMMON_ERRORS,
      },
    },
  },
};
