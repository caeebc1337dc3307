import { COMMON_ERRORS, error, OWNER_PARAM, ref, RUN_ID_PARAM, type Json } from './openapi-parts';

/*
 * The live event streams (seed 004 SSE), spread into openapi.document.ts. The body is
 * text/event-stream; each event's `data` is a RunEvent (described, not a JSON response).
 */

const RESUME_PARAMS = [
  {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description:
      'Resume after this event (EventSource sends it on reconnect): no gap, no duplicate',
    schema: { type: 'string', maxLength: 16000 },
  },
  {
    name: 'lastEventId',
    in: 'query',
    required: false,
    description: 'The same, for clients that cannot set the header',
    schema: { type: 'string', maxLength: 16000 },
  },
];

const STREAM_ERRORS = {
  '400': error('INVALID_REQUEST: a Last-Event-ID that is not an id of this stream'),
  '429': error(
    'QUOTA_EXCEEDED (retryable): the owner already holds TDA_SSE_MAX_STREAMS_PER_OWNER open streams',
  ),
  '502': error(
    'UPSTREAM_UNAVAILABLE: no live feed here (poll GET /runs/{runId}/status), or the instance is shutting down (retryable: reconnect)',
  ),
};

const stream = (description: string): Json => ({
  description,
  content: { 'text/event-stream': { schema: ref('RunEvent') } },
});

export const EVENTS_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  RunEvent: {
    type: 'object',
    description:
      'The `data:` of one event. `event:` is run.created | run.status.changed | run.step.changed | run.step.completed (a step that ended); `id:` is an opaque resume token. Heartbeat comments (`: heartbeat`) keep idle streams open.',
    required: ['runId', 'at'],
    properties: {
      runId: { type: 'string' },
      at: { type: 'string', format: 'date-time', description: "the run's updatedAt" },
      flowKey: { type: 'string' },
      ownerId: { type: 'string' },
      symbol: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
      status: { type: 'string', description: 'the new run or step status' },
      previousStatus: { type: ['string', 'null'], description: 'null: the client knew none' },
      stepId: { type: 'string' },
      stepType: { type: 'string' },
      attempt: { type: 'integer', minimum: 0 },
      error: { type: 'string', description: 'CODE: message' },
    },
  },
};

export const EVENTS_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/runs/{runId}/events': {
    get: {
      operationId: 'streamRunEvents',
      summary: "One run's live events (SSE) from its current state; ends when the run ends",
      parameters: [RUN_ID_PARAM, OWNER_PARAM, ...RESUME_PARAMS],
      responses: {
        '200': stream(
          'text/event-stream: the events, then the stream closes after a terminal run status',
        ),
        '404': error("NOT_FOUND: no such run, or another owner's"),
        ...STREAM_ERRORS,
        ...COMMON_ERRORS,
      },
    },
  },
  '/events/stream': {
    get: {
      operationId: 'streamOwnerEvents',
      summary: 'Live events of every run of the acting owner (SSE), from now or from Last-Event-ID',
      parameters: [OWNER_PARAM, ...RESUME_PARAMS],
      responses: {
        '200': stream('text/event-stream: run.created and every later change of the owner’s runs'),
        ...STREAM_ERRORS,
        ...COMMON_ERRORS,
      },
    },
  },
};
