import { RUN_ID_PATTERN } from '@tda/contracts';
import { LIST_LIMIT_MAX } from '@tda/flow-store';
import { COMMON_ERRORS, OWNER_PARAM, error, json, ref, type Json } from '../http/openapi-parts';
import { TOP_LIMIT_MAX } from './backtest-jobs.service';

/*
 * The OpenAPI paths and schemas of backtest jobs (seed 003), spread into openapi.document.ts.
 * The documents are contracts/backtest_job.schema.json (BacktestJob, BacktestTop,
 * BacktestJobPage); these name their fields (abridged). The routes exist only while
 * TDA_BACKTEST_JOBS_ENABLED (else 404).
 */

const JOB_ID_PARAM = {
  name: 'jobId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
};
const NOT_FOUND = error(
  "NOT_FOUND: no backtest job of the request owner (another owner's is a 404)",
);
const STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const STAGES = ['stage_a', 'stage_b', 'finalizing'];

export const BACKTESTS_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  BacktestJobRequest: {
    type: 'object',
    description:
      'The scope of flow backtest_v1 (GET /flows shows it) plus an optional idempotencyKey; absent fields take the runtime defaults',
    required: ['symbol', 'strategy'],
    properties: {
      symbol: { type: 'string' },
      timeframe: { type: 'string', enum: ['1h', '4h', '1d', '1w', '1M'] },
      asOf: { type: 'string', format: 'date-time' },
      bars: { type: 'integer', minimum: 50 },
      strategy: { type: 'object', description: '{kind, ma?, params: {name: number[]}}' },
      execution: { type: 'object', description: 'Lists per execution field' },
      top_k: { type: 'integer', minimum: 1 },
      preselect: { type: 'integer', minimum: 1 },
      top_trades_n: { type: 'integer', minimum: 0 },
      idempotencyKey: { type: 'string' },
    },
  },
  BacktestJob: {
    type: 'object',
    description: 'contracts/backtest_job.schema.json',
    required: [
      'job_id',
      'owner_id',
      'state',
      'symbol',
      'timeframe',
      'request',
      'hashes',
      'created_at',
    ],
    properties: {
      job_id: { type: 'string' },
      owner_id: { type: 'string' },
      state: { type: 'string', enum: STATES },
      stage: { type: 'string', enum: STAGES },
      progress: {
        type: 'object',
        description: '{stage, processed_units, total_units, updated_at}',
      },
      symbol: { type: 'string' },
      timeframe: { type: 'string' },
      as_of: { type: 'string', format: 'date-time' },
      request: { type: 'object' },
      hashes: {
        type: 'object',
        description: '{request_hash, engine_params_hash, backtest_runtime_config_hash}',
      },
      created_at: { type: 'string', format: 'date-time' },
      started_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time' },
      cancel_requested_at: { type: 'string', format: 'date-time' },
      last_error: { type: 'string' },
      last_error_json: { type: 'object', description: '{code, message, details, retryable}' },
    },
  },
  BacktestTop: {
    type: 'object',
    description: 'contracts/backtest_job.schema.json#/$defs/BacktestTop',
    required: ['job_id', 'state', 'source', 'items'],
    properties: {
      job_id: { type: 'string' },
      state: { type: 'string', enum: STATES },
      source: { type: 'string', enum: ['best_so_far', 'result', 'none'] },
      stage: { type: 'string', enum: STAGES },
      processed_units: { type: 'integer' },
      total_units: { type: 'integer' },
      items: {
        type: 'array',
        items: {
          type: 'object',
          description:
            '{rank, variant_key, base_variant_key, strategy, execution, metrics, report_table_md? (succeeded), trades? (top_trades_n best)}',
        },
      },
    },
  },
  BacktestJobPage: {
    type: 'object',
    required: ['items', 'next_cursor'],
    properties: {
      items: { type: 'array', items: ref('BacktestJob') },
      next_cursor: { type: ['string', 'null'] },
    },
  },
};

export const BACKTESTS_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/backtests/jobs': {
    post: {
      operationId: 'createBacktestJob',
      summary: 'Create a backtest job (a run of flow backtest_v1); every guard is checked now',
      parameters: [OWNER_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('BacktestJobRequest') } },
      },
      responses: {
        '201': json(ref('BacktestJob'), 'Created (Location)'),
        '200': json(ref('BacktestJob'), 'The existing job of a repeated idempotencyKey'),
        '400': error('INVALID_REQUEST: not an object, unknown field, bad symbol or asOf'),
        '422': error(
          'VALIDATION_FAILED: the grid breaks guards (600,000 variants, compute memory, top_k above top_k_persisted_default, top_trades_n above top_k, ...); details.violations lists all, in a fixed order',
        ),
        '429': error(
          'QUOTA_EXCEEDED (retryable): TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER queued + running jobs; nothing was created',
        ),
        ...COMMON_ERRORS,
      },
    },
    get: {
      operationId: 'listBacktestJobs',
      summary: "The request owner's jobs, created_at desc then job_id desc (keyset pages)",
      parameters: [
        OWNER_PARAM,
        { name: 'state', in: 'query', schema: { type: 'string', enum: STATES } },
        {
          name: 'limit',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, default: 20 },
        },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: { '200': json(ref('BacktestJobPage'), 'A page'), ...COMMON_ERRORS },
    },
  },
  '/backtests/jobs/{jobId}': {
    get: {
      operationId: 'getBacktestJob',
      summary: 'State, stage, progress per stage, the three hashes; last_error when failed',
      parameters: [OWNER_PARAM, JOB_ID_PARAM],
      responses: { '200': json(ref('BacktestJob'), 'The job'), '404': NOT_FOUND, ...COMMON_ERRORS },
    },
  },
  '/backtests/jobs/{jobId}/top': {
    get: {
      operationId: 'getBacktestTop',
      summary:
        'Best so far while running (no report tables); the result when succeeded (report_table_md, trades for top_trades_n)',
      parameters: [
        OWNER_PARAM,
        JOB_ID_PARAM,
        {
          name: 'limit',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: TOP_LIMIT_MAX },
        },
      ],
      responses: {
        '200': json(ref('BacktestTop'), 'The ranking'),
        '404': NOT_FOUND,
        ...COMMON_ERRORS,
      },
    },
  },
  '/backtests/jobs/{jobId}/cancel': {
    post: {
      operationId: 'cancelBacktestJob',
      summary:
        'Idempotent: queued → cancelled at once; running → stops at the next batch boundary (cancelled, never failed)',
      parameters: [OWNER_PARAM, JOB_ID_PARAM],
      responses: {
        '200': json(ref('BacktestJob'), 'The job'),
        '404': NOT_FOUND,
        '409': error('CONFLICT: the job already succeeded or failed'),
        ...COMMON_ERRORS,
      },
    },
  },
};
