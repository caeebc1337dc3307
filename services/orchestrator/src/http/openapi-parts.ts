import { RUN_ID_PATTERN, STEP_ID_MAX_LENGTH, STEP_ID_PATTERN } from '@tda/contracts';
import { OWNER_ID_PATTERN } from '../config';

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

/** The answers every authenticated route can give. */
export const COMMON_ERRORS = {
  '401': error(
    'UNAUTHENTICATED: no credential, or an unknown, revoked or expired one (details.reason)',
  ),
  '403': error(
    'FORBIDDEN: an admin route, or X-TDA-Owner naming another owner, without the admin role',
  ),
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

/** X-TDA-Owner: an admin acts for another owner (README "Identity and owners"). */
export const OWNER_PARAM = {
  name: 'X-TDA-Owner',
  in: 'header',
  required: false,
  description:
    "Admin only: act for this owner (default: the caller's own owner; a user naming another owner gets 403)",
  schema: { type: 'string', pattern: OWNER_ID_PATTERN.source },
};
