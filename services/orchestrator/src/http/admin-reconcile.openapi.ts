import { ERROR_CODES, RUN_STATUSES } from '@tda/contracts';

import { COMMON_ERRORS, error, type Json } from './openapi-parts';

const DRIFT_KINDS = [
  'ready_unclaimed',
  'lease_expired',
  'step_timeout',
  'run_deadline',
  'advance_pending',
  'artifact_missing',
] as const;
const DRIFT_ACTIONS = [
  'republish',
  'reclaim',
  'fail_step',
  'cancel_step',
  'fail_run',
  'advance',
  'report_only',
] as const;

const count = { type: 'integer', minimum: 0 };

/** Schemas of GET/POST /admin/reconcile (merged into OPENAPI_SCHEMAS). */
export const ADMIN_RECONCILE_SCHEMAS: Readonly<Record<string, Json>> = {
  DriftItem: {
    type: 'object',
    required: ['kind', 'action', 'detail'],
    properties: {
      kind: { type: 'string', enum: [...DRIFT_KINDS] },
      action: {
        type: 'string',
        enum: [...DRIFT_ACTIONS],
        description:
          'What the apply pass does about it; report_only: nothing is changed automatically',
      },
      stepId: { type: 'string' },
      detail: { type: 'object', description: 'The facts behind the finding (sanitized)' },
    },
  },
  ReconcileReport: {
    type: 'object',
    required: [
      'mode',
      'startedAt',
      'durationMs',
      'runsScanned',
      'maxRuns',
      'truncated',
      'runsWritten',
      'republished',
      'drift',
    ],
    properties: {
      mode: { type: 'string', enum: ['dry_run', 'apply'] },
      startedAt: { type: 'string', format: 'date-time' },
      durationMs: count,
      runsScanned: count,
      endedRunsScanned: {
        ...count,
        description:
          'FAILED and CANCELLED runs looked at (newest TDA_RECONCILE_ENDED_RUNS of each) for steps a dead worker left RUNNING',
      },
      maxRuns: count,
      truncated: {
        type: 'boolean',
        description: 'More RUNNING runs remained than maxRuns allowed',
      },
      runsWritten: { ...count, description: '0 in a dry run' },
      republished: { ...count, description: 'step-ready messages published; 0 in a dry run' },
      reclaimedSteps: count,
      failedSteps: count,
      timedOutSteps: count,
      cancelledSteps: count,
      runsFinished: count,
      errors: count,
      artifactsChecked: count,
      artifactsMissing: count,
      artifactCheckErrors: count,
      drift: {
        type: 'object',
        required: ['total', 'byKind', 'runs'],
        properties: {
          total: count,
          byKind: { type: 'object', additionalProperties: count },
          runs: {
            type: 'array',
            items: {
              type: 'object',
              required: ['runId', 'flowKey', 'status', 'items'],
              properties: {
                runId: { type: 'string' },
                flowKey: { type: 'string' },
                status: { type: 'string', enum: [...RUN_STATUSES] },
                items: { type: 'array', items: { $ref: '#/components/schemas/DriftItem' } },
                applied: {
                  type: 'object',
                  required: ['written', 'status', 'republished'],
                  properties: {
                    written: { type: 'boolean' },
                    status: { type: 'string', enum: [...RUN_STATUSES] },
                    republished: { type: 'array', items: { type: 'string' } },
                  },
                },
                error: {
                  type: 'object',
                  required: ['code', 'message'],
                  properties: {
                    code: { type: 'string', enum: [...ERROR_CODES] },
                    message: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const PARAMETERS = [
  {
    name: 'limit',
    in: 'query',
    description: 'RUNNING runs to look at (default and maximum TDA_RECONCILE_MAX_RUNS)',
    schema: { type: 'integer', minimum: 1 },
  },
  {
    name: 'artifacts',
    in: 'query',
    description: "Check every SUCCEEDED step's artifact exists (report only). Default true",
    schema: { type: 'string', enum: ['true', 'false'], default: 'true' },
  },
];

const report = (description: string): Json => ({
  description,
  content: {
    'application/json': { schema: { $ref: '#/components/schemas/ReconcileReport' } },
  },
});

/** Paths of the reconciler's admin operation (merged into the document's paths). */
export const ADMIN_RECONCILE_PATHS: Readonly<Record<string, Json>> = {
  '/admin/reconcile': {
    get: {
      operationId: 'reconcileDryRun',
      summary: 'Drift report of every RUNNING run (dry run: zero writes, zero publishes)',
      description:
        'READY steps never claimed (republish), RUNNING steps with an expired lease (reclaim, or FAILED LEASE_EXPIRED at maxAttempts), RUNNING steps past their deadlineAt (FAILED STEP_TIMEOUT), runs past their deadline (FAILED RUN_TIMEOUT), documents behind their own rules (advance), and SUCCEEDED steps whose artifact is missing (report only).',
      parameters: PARAMETERS,
      responses: {
        '200': report('The drift report; nothing was changed'),
        '400': error('INVALID_REQUEST: unknown or repeated parameter, bad limit or artifacts'),
        ...COMMON_ERRORS,
      },
    },
    post: {
      operationId: 'reconcileApply',
      summary: 'Apply the reconcile decisions now; the report says what was done',
      description:
        'The same pass as the timer: one conditional write per run with drift, step-ready messages for READY steps, then the queued-run admission. Missing artifacts are reported, never fixed. Options are query parameters; no body.',
      parameters: PARAMETERS,
      responses: {
        '200': report('The drift report with applied per run'),
        '400': error('INVALID_REQUEST: unknown parameter, bad limit or artifacts, or a body'),
        ...COMMON_ERRORS,
      },
    },
  },
};
