import { RUN_ID_PATTERN, STEP_ID_MAX_LENGTH, STEP_ID_PATTERN } from '@tda/contracts';

/*
 * Building blocks shared by the OpenAPI document and the per-feature fragments spread into it
 * (recovery.openapi.ts, admin-reconcile.openapi.ts), so each path is described the same way.
 */

export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

export const json = (schema: Json, description: string): Json => ({
  description,
  content: { 'application/json': { schema } },
});

/** A response whose body is the {code, message, details} ApiError. */
export const error = (description: string): Json => json(ref('ApiError'), description);

/** The answers every bearer-token route can give. */
export const COMMON_ERRORS = {
  '401': error('UNAUTHENTICATED: missing or wrong bearer token'),
  '500': error('INTERNAL_ERROR (details in the service logs under requestId)'),
};

export const RUN_ID_PARAM = {
  name: 'runId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: RUN_ID_PATTERN.source, maxLength: 120 },
};

export const STEP_ID_PARAM = {
  name: 'stepId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: STEP_ID_PATTERN.source, maxLength: STEP_ID_MAX_LENGTH },
};
