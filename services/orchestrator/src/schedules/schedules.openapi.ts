import { SCHEDULE_ID_PATTERN } from '@tda/flow-engine';
import { SCHEDULE_LIST_LIMIT_MAX } from '@tda/flow-store';
import { COMMON_ERRORS, OWNER_PARAM, error, json, ref, type Json } from '../http/openapi-parts';

/*
 * The OpenAPI paths and schemas of schedules and signals (flow 7), spread into
 * openapi.document.ts. The documents are contracts/flow_schedule(_request).schema.json and
 * contracts/signal.schema.json; these name their fields (abridged).
 */

const SCHEDULE_ID_PARAM = {
  name: 'scheduleId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: SCHEDULE_ID_PATTERN.source },
};
const PAGE_PARAMS = [
  {
    name: 'limit',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: SCHEDULE_LIST_LIMIT_MAX, default: 20 },
  },
  { name: 'cursor', in: 'query', schema: { type: 'string' } },
];
const NOT_FOUND = error(
  "NOT_FOUND: no such schedule of the request owner (another owner's is a 404)",
);

export const SCHEDULES_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  FlowScheduleRequest: {
    type: 'object',
    description: 'contracts/flow_schedule_request.schema.json',
    required: ['flowKey', 'scope', 'cron'],
    properties: {
      flowKey: { type: 'string' },
      scope: {
        type: 'object',
        description: "The flow's scope without asOf (a run's asOf is its slot time)",
      },
      cron: { type: 'string', description: '5-field cron, e.g. */5 * * * *' },
      timeZone: { type: 'string', description: 'IANA time zone, default UTC' },
      enabled: { type: 'boolean' },
      catchUp: { type: 'string', enum: ['skip', 'latest'] },
      overlap: { type: 'string', enum: ['skip', 'allow'] },
      minSignalStrength: { type: 'number', minimum: 0, maximum: 1 },
      description: { type: 'string', maxLength: 200 },
    },
  },
  FlowSchedule: {
    type: 'object',
    description:
      'flow_schedules/{scheduleId} (contracts/flow_schedule.schema.json) + nextFireTimes',
    required: ['scheduleId', 'ownerId', 'flowKey', 'scope', 'cron', 'timeZone', 'enabled'],
    properties: {
      scheduleId: { type: 'string' },
      ownerId: { type: 'string' },
      flowKey: { type: 'string' },
      scope: { type: 'object' },
      cron: { type: 'string' },
      timeZone: { type: 'string' },
      enabled: { type: 'boolean' },
      catchUp: { type: 'string', enum: ['skip', 'latest'] },
      overlap: { type: 'string', enum: ['skip', 'allow'] },
      minSignalStrength: { type: 'number' },
      nextSlotAt: { type: 'string', format: 'date-time' },
      lastSlotAt: { type: 'string', format: 'date-time' },
      lastRunId: { type: 'string' },
      lastFire: { type: 'object' },
      nextFireTimes: { type: 'array', items: { type: 'string', format: 'date-time' } },
    },
  },
  ScheduleListPage: {
    type: 'object',
    required: ['schedules', 'nextCursor'],
    properties: {
      schedules: { type: 'array', items: ref('FlowSchedule') },
      nextCursor: { type: ['string', 'null'] },
    },
  },
  ScheduleFire: {
    type: 'object',
    required: ['scheduleId', 'slotAt', 'runId', 'created'],
    properties: {
      scheduleId: { type: 'string' },
      slotAt: { type: 'string', format: 'date-time' },
      runId: { type: 'string' },
      created: { type: 'boolean', description: 'false: the slot had been fired before' },
    },
  },
  Signal: {
    type: 'object',
    description:
      'signals/{signalId} (contracts/signal.schema.json); also the signals topic message',
    required: ['signalId', 'scheduleId', 'slotAt', 'runId', 'symbol', 'action', 'signal_strength'],
    properties: {
      signalId: { type: 'string' },
      scheduleId: { type: 'string' },
      slotAt: { type: 'string', format: 'date-time' },
      runId: { type: 'string' },
      symbol: { type: 'string' },
      action: { type: 'string', enum: ['BUY', 'SELL', 'HOLD', 'REDUCE'] },
      signal_strength: { type: 'number' },
      minSignalStrength: { type: 'number' },
      headline: { type: 'string' },
      recommendationId: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
      publishedAt: { type: 'string', format: 'date-time' },
    },
  },
  SignalListPage: {
    type: 'object',
    required: ['signals', 'nextCursor'],
    properties: {
      signals: { type: 'array', items: ref('Signal') },
      nextCursor: { type: ['string', 'null'] },
    },
  },
  TickReport: {
    type: 'object',
    required: ['at', 'due', 'fired', 'skipped', 'failed', 'unchanged'],
    properties: {
      at: { type: 'string', format: 'date-time' },
      due: { type: 'integer' },
      fired: { type: 'array', items: { type: 'object' } },
      skipped: { type: 'array', items: { type: 'object' } },
      failed: { type: 'array', items: { type: 'object' } },
      unchanged: { type: 'integer' },
    },
  },
};

const scheduleAction = (operationId: string, summary: string): Json => ({
  post: {
    operationId,
    summary,
    parameters: [OWNER_PARAM, SCHEDULE_ID_PARAM],
    responses: {
      '200': json(ref('FlowSchedule'), 'The schedule'),
      '404': NOT_FOUND,
      ...COMMON_ERRORS,
    },
  },
});

export const SCHEDULES_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/schedules': {
    post: {
      operationId: 'createSchedule',
      summary: 'Create a schedule of a flow (checked completely now: cron, time zone, flow, scope)',
      parameters: [OWNER_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('FlowScheduleRequest') } },
      },
      responses: {
        '201': json(ref('FlowSchedule'), 'Created (Location)'),
        '400': error(
          'INVALID_REQUEST: invalid cron, unknown time zone, unknown flow, a scope the flow refuses',
        ),
        ...COMMON_ERRORS,
      },
    },
    get: {
      operationId: 'listSchedules',
      summary: "The request owner's schedules, newest first (keyset pages)",
      parameters: [OWNER_PARAM, ...PAGE_PARAMS],
      responses: { '200': json(ref('ScheduleListPage'), 'A page'), ...COMMON_ERRORS },
    },
  },
  '/schedules/{scheduleId}': {
    get: {
      operationId: 'getSchedule',
      summary: 'A schedule with its next 5 fire times',
      parameters: [OWNER_PARAM, SCHEDULE_ID_PARAM],
      responses: {
        '200': json(ref('FlowSchedule'), 'The schedule'),
        '404': NOT_FOUND,
        ...COMMON_ERRORS,
      },
    },
    delete: {
      operationId: 'deleteSchedule',
      summary: 'Delete a schedule (its runs and signals stay)',
      parameters: [OWNER_PARAM, SCHEDULE_ID_PARAM],
      responses: { '204': { description: 'Deleted' }, '404': NOT_FOUND, ...COMMON_ERRORS },
    },
  },
  '/schedules/{scheduleId}/pause': scheduleAction(
    'pauseSchedule',
    'Pause (no slot fires while paused)',
  ),
  '/schedules/{scheduleId}/resume': scheduleAction(
    'resumeSchedule',
    'Resume from now (the slots of the pause are not caught up)',
  ),
  '/schedules/{scheduleId}/fire': {
    post: {
      operationId: 'fireSchedule',
      summary:
        'Fire now (the current minute) or a past slot (backfill, body {slotAt}): one run per slot',
      parameters: [OWNER_PARAM, SCHEDULE_ID_PARAM],
      requestBody: {
        required: false,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { slotAt: { type: 'string', format: 'date-time' } },
            },
          },
        },
      },
      responses: {
        '201': json(ref('ScheduleFire'), 'Fired (Location: the run)'),
        '200': json(ref('ScheduleFire'), 'The slot had been fired: its run'),
        '400': error('INVALID_REQUEST: slotAt in the future or not a fire time of the expression'),
        '404': NOT_FOUND,
        ...COMMON_ERRORS,
      },
    },
  },
  '/signals': {
    get: {
      operationId: 'listSignals',
      summary: "The request owner's signals, newest first; ?symbol= any spelling of the pair",
      parameters: [
        OWNER_PARAM,
        { name: 'symbol', in: 'query', schema: { type: 'string' } },
        ...PAGE_PARAMS,
      ],
      responses: { '200': json(ref('SignalListPage'), 'A page'), ...COMMON_ERRORS },
    },
  },
  '/admin/schedules/tick': {
    post: {
      operationId: 'tickSchedules',
      summary:
        'Fire every due schedule slot now (Cloud Scheduler, every minute); idempotent per slot',
      responses: { '200': json(ref('TickReport'), 'What the tick did'), ...COMMON_ERRORS },
    },
  },
};
