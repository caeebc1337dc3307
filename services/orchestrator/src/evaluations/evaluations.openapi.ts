import { COMMON_ERRORS, OWNER_PARAM, error, json, ref, type Json } from '../http/openapi-parts';

/*
 * The OpenAPI paths and schemas of walk-forward evaluations, spread into openapi.document.ts.
 * The documents are contracts/recommendation_evaluation*.schema.json; these name their fields
 * (abridged).
 */

const ID_PARAM = {
  name: 'evaluationId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^evl_[a-z0-9]{20}$' },
};
const NOT_FOUND = error("NOT_FOUND: no evaluation of the request owner (another owner's is a 404)");
const TIMESTAMP = { type: 'string', format: 'date-time' };

export const EVALUATIONS_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  EvaluationRequest: {
    type: 'object',
    description: 'contracts/recommendation_evaluation_request.schema.json',
    required: ['symbol', 'from', 'to', 'every', 'accountId'],
    properties: {
      symbol: { type: 'string' },
      from: TIMESTAMP,
      to: TIMESTAMP,
      every: { type: 'string', pattern: '^[1-9][0-9]{0,3}[mhdw]$', examples: ['1d', '1w'] },
      accountId: { type: 'string' },
      scope: { type: 'object', description: "More of flow 4's scope (timeframes, ...)" },
      feeBps: { type: 'number', minimum: 0, default: 10 },
      slippageBps: { type: 'number', minimum: 0, default: 0 },
      window: { type: 'integer', minimum: 1, maximum: 10, default: 2 },
      idempotencyKey: { type: 'string' },
    },
  },
  Evaluation: {
    type: 'object',
    description: 'contracts/recommendation_evaluation.schema.json (the stored document)',
    required: ['evaluationId', 'symbol', 'from', 'to', 'every', 'points', 'createdAt'],
    properties: {
      evaluationId: { type: 'string' },
      symbol: { type: 'string' },
      from: TIMESTAMP,
      to: TIMESTAMP,
      every: { type: 'string' },
      window: { type: 'integer' },
      points: { type: 'array', items: { type: 'object', description: '{asOf, runId?, error?}' } },
      createdAt: TIMESTAMP,
      cancelRequestedAt: TIMESTAMP,
    },
  },
  EvaluationView: {
    type: 'object',
    description: 'contracts/recommendation_evaluation.schema.json#/$defs/EvaluationView',
    required: ['evaluationId', 'state', 'counts', 'items', 'table'],
    properties: {
      evaluationId: { type: 'string' },
      state: { type: 'string', enum: ['running', 'completed', 'cancelled'] },
      counts: {
        type: 'object',
        description: '{points, triggered, active, succeeded, failed, cancelled}',
      },
      items: {
        type: 'array',
        items: {
          type: 'object',
          description:
            '{asOf, runId?, runStatus?, recommendations?: [{stepId, provider, modelName, promptId, action, horizonDays, score}], error?}',
        },
      },
      table: {
        type: 'array',
        items: {
          type: 'object',
          description:
            '{provider, modelName, promptId, count, pending, noTrade, trades, hitRatePct, meanReturnPct, medianReturnPct, meanMaePct, buyAndHoldMeanPct, excessVsBuyAndHoldPct}',
        },
      },
    },
  },
  EvaluationPage: {
    type: 'object',
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Evaluation') },
      nextCursor: { type: ['string', 'null'] },
    },
  },
};

export const EVALUATIONS_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/evaluations/recommendations': {
    post: {
      operationId: 'createRecommendationEvaluation',
      summary:
        'Walk-forward: flow 4 at each point of [from, to] every `every`, `window` runs at a time, each recommendation scored against the candles after its asOf',
      parameters: [OWNER_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('EvaluationRequest') } },
      },
      responses: {
        '201': json(ref('EvaluationView'), 'Created (Location)'),
        '200': json(ref('EvaluationView'), 'The existing evaluation of a repeated idempotencyKey'),
        '400': error(
          'INVALID_REQUEST: a field, a period, to before from, more than TDA_EVALUATION_MAX_POINTS points, or a scope flow 4 refuses',
        ),
        ...COMMON_ERRORS,
      },
    },
  },
  '/evaluations': {
    get: {
      operationId: 'listEvaluations',
      summary: "The request owner's evaluations, createdAt desc (keyset pages; no scores)",
      parameters: [
        OWNER_PARAM,
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: { '200': json(ref('EvaluationPage'), 'A page'), ...COMMON_ERRORS },
    },
  },
  '/evaluations/{evaluationId}': {
    get: {
      operationId: 'getEvaluation',
      summary:
        'State, counts, each point with its run and scores, the table per provider/model/prompt',
      parameters: [OWNER_PARAM, ID_PARAM],
      responses: {
        '200': json(ref('EvaluationView'), 'The evaluation'),
        '404': NOT_FOUND,
        ...COMMON_ERRORS,
      },
    },
  },
  '/evaluations/{evaluationId}/cancel': {
    post: {
      operationId: 'cancelEvaluation',
      summary: 'Idempotent: no further run is triggered; the active runs are cancelled',
      parameters: [OWNER_PARAM, ID_PARAM],
      responses: {
        '200': json(ref('EvaluationView'), 'The evaluation'),
        '404': NOT_FOUND,
        ...COMMON_ERRORS,
      },
    },
  },
};
