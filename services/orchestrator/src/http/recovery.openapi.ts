import {
  RUN_STATUSES,
  STEP_ID_MAX_LENGTH,
  STEP_ID_PATTERN,
  STEP_STATUSES,
  STEP_TYPES,
} from '@tda/contracts';
import { SNAPSHOT_NAME_PATTERN } from '@tda/messaging';
import {
  COMMON_ERRORS,
  error,
  json,
  ref,
  RUN_ID_PARAM,
  STEP_ID_PARAM,
  type Json,
} from './openapi-parts';

/*
 * The OpenAPI paths and schemas of the recovery operations (retry, rerun, replay, snapshots),
 * spread into openapi.document.ts; kept here so that document does not grow with every feature.
 */

const SNAPSHOT_NAME = { type: 'string', pattern: SNAPSHOT_NAME_PATTERN.source };

export const RECOVERY_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  RerunRequest: {
    type: 'object',
    required: ['fromStepId'],
    properties: {
      fromStepId: {
        type: 'string',
        pattern: STEP_ID_PATTERN.source,
        maxLength: STEP_ID_MAX_LENGTH,
      },
    },
    additionalProperties: false,
  },
  ReplayRequest: {
    type: 'object',
    required: ['subscription'],
    description: 'Exactly one of time and snapshot.',
    properties: {
      subscription: {
        type: 'string',
        description: '<prefix>-step-ready-<step-type>-sub or <prefix>-step-events-sub',
      },
      time: { type: 'string', format: 'date-time', description: 'Not in the future' },
      snapshot: SNAPSHOT_NAME,
      dryRun: { type: 'boolean', default: false },
    },
    additionalProperties: false,
  },
  ReplayResponse: {
    type: 'object',
    required: [
      'subscription',
      'kind',
      'dryRun',
      'seeked',
      'target',
      'since',
      'source',
      'note',
      'scannedRuns',
      'truncated',
      'counts',
    ],
    properties: {
      subscription: { type: 'string' },
      kind: { type: 'string', enum: ['step_ready', 'step_events'] },
      stepType: { type: 'string', enum: [...STEP_TYPES] },
      dryRun: { type: 'boolean' },
      seeked: { type: 'boolean' },
      target: { type: 'object', description: '{time} or {snapshot}' },
      since: {
        type: 'string',
        format: 'date-time',
        description:
          'Lower bound of the replayed publish times (time, or snapshot expireTime - 7 days)',
      },
      source: { const: 'run_documents' },
      note: { type: 'string' },
      scannedRuns: { type: 'integer' },
      truncated: { type: 'boolean' },
      counts: { type: 'object', additionalProperties: { type: 'integer' } },
      steps: {
        type: 'array',
        description: 'step_ready: the steps that would receive a message',
        items: {
          type: 'object',
          required: [
            'runId',
            'runStatus',
            'stepId',
            'stepType',
            'stepStatus',
            'evidence',
            'decision',
            'summary',
          ],
          properties: {
            runId: { type: 'string' },
            runStatus: { type: 'string', enum: [...RUN_STATUSES] },
            stepId: { type: 'string' },
            stepType: { type: 'string', enum: [...STEP_TYPES] },
            stepStatus: { type: 'string', enum: [...STEP_STATUSES] },
            evidence: { type: 'string', enum: ['ready_at', 'still_ready'] },
            readyAt: { type: 'string', format: 'date-time' },
            decision: { type: 'string', enum: ['execute', 'takeover', 'noop'] },
            reason: { type: 'object' },
            summary: {
              type: 'string',
              description: "'execute', 'takeover: ...' or 'noop: <reason>'",
            },
          },
        },
      },
      runs: {
        type: 'array',
        description: 'step_events: the runs whose step events would be redelivered',
        items: {
          type: 'object',
          required: [
            'runId',
            'runStatus',
            'events',
            'decision',
            'wouldBecomeReady',
            'wouldRepublish',
            'summary',
          ],
          properties: {
            runId: { type: 'string' },
            runStatus: { type: 'string', enum: [...RUN_STATUSES] },
            events: { type: 'array', items: { type: 'object' } },
            decision: { type: 'string', enum: ['advance', 'noop'] },
            wouldBecomeReady: { type: 'array', items: { type: 'string' } },
            wouldRepublish: { type: 'array', items: { type: 'string' } },
            summary: { type: 'string' },
          },
        },
      },
    },
  },
  SnapshotRequest: {
    type: 'object',
    required: ['subscription', 'name'],
    properties: { subscription: { type: 'string' }, name: SNAPSHOT_NAME },
    additionalProperties: false,
  },
  Snapshot: {
    type: 'object',
    required: ['name', 'subscription', 'topic'],
    properties: {
      name: { type: 'string' },
      subscription: { type: 'string' },
      topic: { type: 'string' },
      expireTime: { type: 'string', format: 'date-time' },
      replaysFrom: { type: 'string', format: 'date-time' },
    },
  },
};

const RETRY_CONFLICT = error(
  'CONFLICT: details.reason run_cancelled (a cancelled run never restarts) | step_not_failed | run_not_failed | other_failed_steps (retry them together) | steps_running (retryable: wait for them) | would_fail_again | no_failed_steps',
);

export const RECOVERY_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/runs/{runId}/steps/{stepId}/retry': {
    post: {
      operationId: 'retryStep',
      summary:
        'Retry a FAILED step of a FAILED run: the step and the steps the failure cancelled go back to PENDING (attempt 0, history in retryHistory), the run RUNNING; idempotent',
      parameters: [RUN_ID_PARAM, STEP_ID_PARAM],
      responses: {
        '200': json(
          ref('FlowRun'),
          'The run as written (RUNNING), or as it is after an earlier retry',
        ),
        '400': error('INVALID_REQUEST: malformed runId or stepId'),
        '404': error('NOT_FOUND: no such run or step'),
        '409': RETRY_CONFLICT,
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/retry': {
    post: {
      operationId: 'retryRun',
      summary: 'Retry every FAILED step of a FAILED run together',
      parameters: [RUN_ID_PARAM],
      responses: {
        '200': json(ref('FlowRun'), 'The run as written (RUNNING)'),
        '400': error('INVALID_REQUEST: malformed runId'),
        '404': error('NOT_FOUND'),
        '409': RETRY_CONFLICT,
        ...COMMON_ERRORS,
      },
    },
  },
  '/runs/{runId}/rerun': {
    post: {
      operationId: 'rerunFromStep',
      summary:
        'A NEW run of the same flow/scope/owner: fromStepId and its downstream are executed, every other step is reused SUCCEEDED from the source (same gcs_uri, outputs.execution.reusedFrom)',
      parameters: [RUN_ID_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('RerunRequest') } },
      },
      responses: {
        '201': json(
          ref('FlowRun'),
          'The new run (Location: /runs/{newRunId}; trigger.rerunOf links the source)',
        ),
        '400': error('INVALID_REQUEST: malformed runId, body or fromStepId'),
        '404': error('NOT_FOUND: no such run or step'),
        '409': error('CONFLICT: a step outside the rerun did not SUCCEED (details.steps)'),
        '429': error('QUOTA_EXCEEDED: the owner has too many active runs'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/admin/replay': {
    post: {
      operationId: 'replaySubscription',
      summary:
        'Seek a step-ready or the step-events subscription to a time or a snapshot (Pub/Sub redelivers what it retained); dryRun lists, from the run documents, which steps would receive messages and what each receiver would do',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('ReplayRequest') } },
      },
      responses: {
        '200': json(
          ref('ReplayResponse'),
          'The preview; seeked: true once the subscription was sought',
        ),
        '400': error(
          'INVALID_REQUEST: unknown subscription (details.allowed), both or neither of time/snapshot, a time in the future or not RFC 3339, a bad snapshot name, a snapshot of another topic',
        ),
        '404': error('NOT_FOUND: the subscription or the snapshot does not exist'),
        '502': error('UPSTREAM_UNAVAILABLE: the broker failed the seek (retryable)'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/admin/snapshots': {
    post: {
      operationId: 'createSnapshot',
      summary: "Snapshot a subscription's ack state now (for POST /admin/replay {snapshot})",
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('SnapshotRequest') } },
      },
      responses: {
        '201': json(ref('Snapshot'), 'The snapshot'),
        '400': error('INVALID_REQUEST: unknown subscription, bad name'),
        '404': error('NOT_FOUND: the subscription does not exist'),
        '409': error('CONFLICT: a snapshot of that name exists'),
        '502': error('UPSTREAM_UNAVAILABLE: the broker failed'),
        ...COMMON_ERRORS,
      },
    },
  },
};
