import {
  ERROR_CODES,
  FLOW_KEY_PATTERN,
  RUN_ID_PATTERN,
  RUN_STATUSES,
  STEP_STATUSES,
  STEP_TYPES,
  SYMBOL_PATTERN,
  TIMESTAMP_PATTERN,
  ACCOUNT_ID_PATTERN,
  TIMEFRAMES,
} from '@tda/contracts';
import { LIST_LIMIT_MAX } from '@tda/flow-store';
import { DEFAULT_LIST_LIMIT } from '../runs/run-list-query';
import {
  MAX_ARTIFACT_RESPONSE_BYTES,
  MAX_FILE_RESPONSE_BYTES,
} from '../runs/step-artifact.service';
import { RECOVERY_OPENAPI_PATHS, RECOVERY_OPENAPI_SCHEMAS } from './recovery.openapi';
import { ADMIN_RECONCILE_PATHS, ADMIN_RECONCILE_SCHEMAS } from './admin-reconcile.openapi';
import { ACCOUNTS_OPENAPI_PATHS, ACCOUNTS_OPENAPI_SCHEMAS } from './accounts.openapi';
import { SCHEDULES_OPENAPI_PATHS, SCHEDULES_OPENAPI_SCHEMAS } from '../schedules/schedules.openapi';
import { BACKTESTS_OPENAPI_PATHS, BACKTESTS_OPENAPI_SCHEMAS } from '../backtests/backtests.openapi';
import {
  EVALUATIONS_OPENAPI_PATHS,
  EVALUATIONS_OPENAPI_SCHEMAS,
} from '../evaluations/evaluations.openapi';
import { EVENTS_OPENAPI_PATHS, EVENTS_OPENAPI_SCHEMAS } from './events.openapi';
import { IDENTITY_OPENAPI_PATHS, IDENTITY_OPENAPI_SCHEMAS } from './identity.openapi';
import { INDEX_OPENAPI_PATHS, INDEX_OPENAPI_SCHEMAS } from './index.openapi';
import { artifactContractsPhrase, STEP_TYPE_OPENAPI_SCHEMAS } from './step-types.openapi';
import {
  COMMON_ERRORS,
  error,
  json,
  OWNER_PARAM,
  ref,
  RUN_ID_PARAM,
  STEP_ID_PARAM,
  type Json,
} from './openapi-parts';

/**
 * Schemas of the request/response bodies. TriggerRequest and ApiError are the contracts'
 * schemas with their $refs inlined (openapi.document.spec.ts compares them with contracts/);
 * FlowRun is abridged to its top level — the full document schema is
 * contracts/flow_run.schema.json.
 */
export const OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  TriggerRequest: {
    type: 'object',
    required: ['flowKey', 'scope'],
    properties: {
      flowKey: { type: 'string', pattern: FLOW_KEY_PATTERN.source, maxLength: 100 },
      scope: {
        type: 'object',
        required: ['symbol'],
        properties: {
          symbol: { type: 'string', pattern: SYMBOL_PATTERN.source },
          asOf: { type: 'string', pattern: TIMESTAMP_PATTERN.source },
          accountId: { type: 'string', pattern: ACCOUNT_ID_PATTERN.source },
          timeframes: {
            type: 'array',
            items: { type: 'string', enum: [...TIMEFRAMES] },
            minItems: 1,
            uniqueItems: true,
          },
        },
      },
      idempotencyKey: { type: 'string', pattern: '^[A-Za-z0-9_:\\-]{1,200}$' },
      trigger: {
        type: 'object',
        required: ['type', 'source'],
        properties: {
          type: { type: 'string', enum: ['SCHEDULER', 'USER', 'SYSTEM', 'DEBUG_HTTP'] },
          source: { type: 'string', minLength: 1, maxLength: 200 },
          // Set by schedules only: a trigger request naming them is refused (400).
          scheduleId: { type: 'string', minLength: 1, maxLength: 100 },
          slotAt: { type: 'string', pattern: TIMESTAMP_PATTERN.source },
        },
      },
      deadlineSeconds: { type: 'integer', minimum: 10, maximum: 86400 },
    },
    additionalProperties: false,
  },
  ApiError: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'string', enum: [...ERROR_CODES] },
      message: { type: 'string', minLength: 1, maxLength: 2000 },
      details: { type: 'object' },
      retryable: { type: 'boolean' },
      requestId: { type: 'string', minLength: 1, maxLength: 200 },
    },
    additionalProperties: false,
  },
  FlowRun: {
    type: 'object',
    description: 'flow_runs/{runId} as stored (abridged; see contracts/flow_run.schema.json).',
    required: [
      'schemaVersion',
      'runId',
      'flowKey',
      'status',
      'createdAt',
      'updatedAt',
      'trigger',
      'scope',
      'ownerId',
      'steps',
    ],
    properties: {
      schemaVersion: { type: 'integer' },
      runId: { type: 'string', pattern: RUN_ID_PATTERN.source },
      flowKey: { type: 'string', pattern: FLOW_KEY_PATTERN.source },
      status: { type: 'string', enum: [...RUN_STATUSES] },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      startedAt: { type: 'string', format: 'date-time' },
      finishedAt: { type: 'string', format: 'date-time' },
      trigger: { type: 'object' },
      scope: { type: 'object' },
      ownerId: { type: 'string' },
      idempotencyKey: { type: 'string' },
      deadlineAt: { type: 'string', format: 'date-time' },
      cancelRequestedAt: { type: 'string', format: 'date-time' },
      progress: { type: 'object' },
      error: { type: 'object' },
      steps: {
        type: 'object',
        description: 'stepId -> step',
        additionalProperties: {
          type: 'object',
          required: ['stepType', 'status', 'dependsOn', 'inputs', 'outputs', 'attempt'],
          properties: {
            stepType: { type: 'string', enum: [...STEP_TYPES] },
            status: { type: 'string', enum: [...STEP_STATUSES] },
            dependsOn: { type: 'array', items: { type: 'string' } },
            attempt: { type: 'integer' },
            inputs: ref('StepInputs'),
            outputs: {
              type: 'object',
              description: 'gcs_uri, execution, reportId/recommendationId (contracts/flow_run)',
            },
          },
        },
      },
    },
  },
  RunListPage: {
    type: 'object',
    required: ['runs', 'nextCursor'],
    properties: {
      runs: { type: 'array', items: ref('FlowRun') },
      nextCursor: { type: ['string', 'null'], description: 'null on the last page' },
    },
  },
  BlockedOn: {
    type: 'object',
    required: ['runId', 'runStatus', 'stepId', 'status', 'reasons', 'summary'],
    properties: {
      runId: { type: 'string' },
      runStatus: { type: 'string', enum: [...RUN_STATUSES] },
      stepId: { type: 'string' },
      status: { type: 'string', enum: [...STEP_STATUSES] },
      reasons: {
        type: 'array',
        items: { type: 'object', required: ['kind'], properties: { kind: { type: 'string' } } },
      },
      summary: { type: 'string' },
    },
  },
  FlowList: {
    type: 'object',
    required: ['flows'],
    properties: {
      flows: {
        type: 'array',
        items: {
          type: 'object',
          required: ['flowKey', 'description', 'scopeSchema'],
          properties: {
            flowKey: { type: 'string' },
            description: { type: 'string' },
            scopeSchema: {
              type: 'object',
              description:
                'The scope a trigger may give, as JSON Schema (type object, properties, required); clients generate their trigger form from it',
              required: ['type', 'properties', 'required'],
              properties: {
                type: { type: 'string', enum: ['object'] },
                properties: { type: 'object', additionalProperties: { type: 'object' } },
                required: { type: 'array', items: { type: 'string' } },
                additionalProperties: { type: 'boolean' },
              },
            },
          },
        },
      },
    },
  },
  ...STEP_TYPE_OPENAPI_SCHEMAS,
  ...ADMIN_RECONCILE_SCHEMAS,
  ...RECOVERY_OPENAPI_SCHEMAS,
  ...ACCOUNTS_OPENAPI_SCHEMAS,
  ...INDEX_OPENAPI_SCHEMAS,
  ...IDENTITY_OPENAPI_SCHEMAS,
  ...EVENTS_OPENAPI_SCHEMAS,
  ...SCHEDULES_OPENAPI_SCHEMAS,
  ...BACKTESTS_OPENAPI_SCHEMAS,
  ...EVALUATIONS_OPENAPI_SCHEMAS,
  RunStatusSummary: {
    type: 'object',
    description:
      'seed 004 status.json (contracts/run_status_summary.schema.json): status is the lifecycle word of run_status (PENDING queued, RUNNING running, SUCCEEDED completed, FAILED failed, CANCELLED cancelled)',
    required: [
      'run_id',
      'flow_key',
      'status',
      'run_status',
      'trigger',
      'started_at',
      'finished_at',
      'current_step',
      'steps_total',
      'steps_completed',
      'error',
    ],
    properties: {
      run_id: { type: 'string' },
      flow_key: { type: 'string' },
      status: { type: 'string', enum: ['queued', 'running', 'completed', 'failed', 'cancelled'] },
      run_status: { type: 'string', enum: [...RUN_STATUSES] },
      trigger: { type: 'string', enum: ['scheduler', 'user', 'system', 'debug_http'] },
      started_at: { type: ['string', 'null'] },
      finished_at: { type: ['string', 'null'] },
      current_step: { type: ['string', 'null'] },
      steps_total: { type: 'integer', minimum: 0 },
      steps_completed: { type: 'integer', minimum: 0 },
      error: { type: ['string', 'null'], description: 'CODE: message' },
    },
    additionalProperties: false,
  },
};

/** Triggering, listing, reading and cancelling runs. */
const RUN_PATHS: Readonly<Record<string, Json>> = {
  '/runs': {
    post: {
      operationId: 'triggerRun',
      summary: 'Create a run of a flow (idempotent per owner and idempotencyKey)',
      parameters: [OWNER_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('TriggerRequest') } },
      },
      responses: {
        '201': json(
          ref('FlowRun'),
          'Created (Location: /runs/{runId}): RUNNING when admitted, PENDING while queued behind the running-runs limits (see blocked-on)',
        ),
        '200': json(ref('FlowRun'), 'The existing run of this idempotencyKey'),
        '400': error('INVALID_REQUEST: body, scope or flowKey (details.availableFlowKeys)'),
        '409': error(
          'CONFLICT: idempotencyKey reused for a different request (flowKey, scope or deadlineSeconds; details.field)',
        ),
        '429': error(
          'QUOTA_EXCEEDED (retryable): the owner already has TDA_MAX_ACTIVE_RUNS_PER_OWNER active (PENDING or RUNNING) runs; details {ownerId, active, limit}; nothing was created',
        ),
        ...COMMON_ERRORS,
      },
    },
    get: {
      operationId: 'listRuns',
      summary: "The acting owner's runs, newest first (keyset pagination)",
      parameters: [
        OWNER_PARAM,
        {
          name: 'limit',
          in: 'query',
          schema: {
            type: 'integer',
            minimum: 1,
            maximum: LIST_LIMIT_MAX,
            default: DEFAULT_LIST_LIMIT,
          },
        },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
        {
          name: 'status',
          in: 'query',
          schema: { type: 'string', enum: [...RUN_STATUSES] },
        },
        { name: 'flowKey', in: 'query', schema: { type: 'string' } },
        {
          name: 'symbol',
          in: 'query',
          description: 'scope.symbol exactly as triggered',
          schema: { type: 'string' },
        },
        { name: 'idempotencyKey', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': json(ref('RunListPage'), 'One page'),
        '400': error('INVALID_REQUEST: bad limit, cursor, status or unknown parameter'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}': {
    get: {
      operationId: 'getRun',
      summary: 'The run document: steps, statuses, inputs, outputs, errors',
      parameters: [RUN_ID_PARAM],
      responses: {
        '200': json(ref('FlowRun'), 'The run'),
        '400': error('INVALID_REQUEST: malformed runId'),
        '404': error('NOT_FOUND'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/status': {
    get: {
      operationId: 'getRunStatus',
      summary: 'seed 004 status for pollers; ETag, If-None-Match -> 304',
      parameters: [
        RUN_ID_PARAM,
        {
          name: 'If-None-Match',
          in: 'header',
          description: 'the ETag of an earlier answer: 304 without a body while it still holds',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': json(ref('RunStatusSummary'), 'The status (ETag header; Cache-Control: no-cache)'),
        '304': { description: 'Unchanged since the ETag in If-None-Match' },
        '400': error('INVALID_REQUEST: malformed runId'),
        '404': error('NOT_FOUND'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/cancel': {
    post: {
      operationId: 'cancelRun',
      summary: 'Cancel (idempotent); RUNNING steps stop at their next heartbeat',
      parameters: [RUN_ID_PARAM],
      responses: {
        '200': json(ref('FlowRun'), 'The run, CANCELLED (also when it already was)'),
        '400': error('INVALID_REQUEST: malformed runId'),
        '404': error('NOT_FOUND'),
        '409': error('CONFLICT: the run already SUCCEEDED or FAILED'),
        ...COMMON_ERRORS,
      },
    },
  },
};

/** What a step waits on, and its artifact. */
const STEP_PATHS: Readonly<Record<string, Json>> = {
  '/runs/{runId}/steps/{stepId}/blocked-on': {
    get: {
      operationId: 'blockedOn',
      summary:
        'Why a step is not running / not done (a queued run: reason kind "queued" with its position)',
      parameters: [RUN_ID_PARAM, STEP_ID_PARAM],
      responses: {
        '200': json(ref('BlockedOn'), 'Structured reasons and a summary'),
        '400': error('INVALID_REQUEST: malformed runId or stepId'),
        '404': error('NOT_FOUND: no such run or step'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/steps/{stepId}/artifact': {
    get: {
      operationId: 'getStepArtifact',
      summary: "The step's primary artifact (outputs.gcs_uri), byte for byte as stored",
      description: `Read-only, through the artifact store. Served only from the deployment's artifacts bucket and up to ${MAX_ARTIFACT_RESPONSE_BYTES} bytes. Headers X-TDA-Artifact-Uri and X-TDA-Artifact-Sha256 (equal to outputs.execution.artifact.sha256).`,
      parameters: [RUN_ID_PARAM, STEP_ID_PARAM],
      responses: {
        '200': json(
          ref('StepArtifact'),
          `The artifact JSON (${artifactContractsPhrase()} contract, by step type)`,
        ),
        '400': error('INVALID_REQUEST: malformed runId or stepId'),
        '404': error('NOT_FOUND: no such run or step'),
        '409': error(
          'CONFLICT: the step has no artifact yet (details.status; artifacts exist once it SUCCEEDED)',
        ),
        '502': error(
          'UPSTREAM_UNAVAILABLE: storage cannot serve it (details.reason: read_failed (retryable) | missing | too_large | not_json | invalid_uri | foreign_bucket)',
        ),
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/steps/{stepId}/files/{fileName}': {
    get: {
      operationId: 'getStepFile',
      summary: "One file of the step's bundle (a chart PNG, the OHLCV CSV), as stored",
      description: `Files beside the primary artifact named <stepId>.<…> (.png, .json, .csv, .md), up to ${MAX_FILE_RESPONSE_BYTES} bytes; the charts manifest names each PNG (the basename of its gcs_uri). Header X-TDA-Artifact-Sha256.`,
      parameters: [
        RUN_ID_PARAM,
        STEP_ID_PARAM,
        {
          name: 'fileName',
          in: 'path',
          required: true,
          schema: { type: 'string', maxLength: 251 },
        },
      ],
      responses: {
        '200': {
          description: 'The file (Content-Type by extension)',
          content: {
            'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
            'text/csv': { schema: { type: 'string' } },
          },
        },
        '400': error('INVALID_REQUEST: malformed runId or stepId'),
        '404': error('NOT_FOUND: no such run or step, or no such file of the step'),
        '409': error('CONFLICT: the step has no artifact yet'),
        '502': error('UPSTREAM_UNAVAILABLE: storage cannot serve it (details.reason)'),
        ...COMMON_ERRORS,
      },
    },
  },
};

/** The only client error of the service routes: another method on their path (404 NOT_FOUND). */
const OTHER_METHOD = error('NOT_FOUND: another method on this path');

/** The flow catalogue and the unauthenticated service routes. */
const SERVICE_PATHS: Readonly<Record<string, Json>> = {
  '/flows': {
    get: {
      operationId: 'listFlows',
      summary: 'The flow catalogue: flowKey and description of every flow that can be triggered',
      responses: { '200': json(ref('FlowList'), 'The flow catalogue'), ...COMMON_ERRORS },
    },
  },
  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'Liveness (no auth)',
      security: [],
      responses: {
        '200': json(
          { type: 'object', properties: { status: { const: 'ok' } } },
          'The process is up',
        ),
        '4XX': OTHER_METHOD,
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics (no auth)',
      security: [],
      responses: {
        '200': {
          description: 'Prometheus text exposition (tda_* counters)',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        '4XX': OTHER_METHOD,
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openApi',
      summary: 'This API description (OpenAPI 3.1, no auth)',
      security: [],
      responses: { '200': { description: 'This document' }, '4XX': OTHER_METHOD },
    },
  },
};

/** The OpenAPI 3.1 description served at GET /openapi.json (and rendered at /docs). */
export function buildOpenApiDocument(): Json {
  return {
    openapi: '3.1.0',
    servers: [{ url: '/', description: 'this orchestrator (the API is served at its root)' }],
    info: {
      title: 'TDA orchestrator API',
      version: '1',
      license: {
        name: 'UNLICENSED (proprietary; package.json license)',
        identifier: 'LicenseRef-UNLICENSED',
      },
      description:
        "Trigger, inspect and cancel flow runs. Errors: ApiError with the HTTP status of ERROR_CODE_INFO[code]. Auth (README \"Identity and owners\"): Authorization: Bearer <API token | operator token | Google ID token>, or Identity-Aware Proxy's signed header. Every route acts for the caller's owner: another owner's run, account, report or recommendation is a 404; admin routes need the admin role.",
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token (tda_…), the operator token, or a Google ID token',
        },
        iap: {
          type: 'apiKey',
          in: 'header',
          name: 'x-goog-iap-jwt-assertion',
          description: "Identity-Aware Proxy's signed header (verified; TDA_IAP_AUDIENCE)",
        },
      },
      schemas: OPENAPI_SCHEMAS,
    },
    security: [{ bearer: [] }, { iap: [] }],
    paths: {
      ...RUN_PATHS,
      ...STEP_PATHS,
      ...SERVICE_PATHS,
      ...ADMIN_RECONCILE_PATHS,
      ...RECOVERY_OPENAPI_PATHS,
      ...ACCOUNTS_OPENAPI_PATHS,
      ...SCHEDULES_OPENAPI_PATHS,
      ...BACKTESTS_OPENAPI_PATHS,
      ...EVALUATIONS_OPENAPI_PATHS,
      ...INDEX_OPENAPI_PATHS,
      ...IDENTITY_OPENAPI_PATHS,
      ...EVENTS_OPENAPI_PATHS,
    },
  };
}
