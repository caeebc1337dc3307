import { OWNER_ID_PATTERN } from '@tda/contracts';
import { TOKEN_ID_PATTERN } from '@tda/identity';
import { COMMON_ERRORS, error, json, ref, type Json } from './openapi-parts';

/*
 * GET /me and the admin routes of principals (API tokens, Google account mappings), spread into
 * openapi.document.ts. The documents are contracts/api_token.schema.json and
 * user_identity.schema.json (the spec checks these name exactly their fields).
 */

const OWNER_ID = { type: 'string', pattern: OWNER_ID_PATTERN.source };
const ROLE = { type: 'string', enum: ['user', 'admin'] };
const TIME = { type: 'string', format: 'date-time' };
const TOKEN_ID = { type: 'string', pattern: TOKEN_ID_PATTERN.source };
const EMAIL_PARAM = { name: 'email', in: 'path', required: true, schema: { type: 'string' } };

const API_TOKEN_PROPERTIES = {
  tokenId: TOKEN_ID,
  ownerId: OWNER_ID,
  role: ROLE,
  name: { type: 'string', minLength: 1, maxLength: 100 },
  createdAt: TIME,
  createdBy: { type: 'string' },
  expiresAt: TIME,
  revokedAt: TIME,
  lastUsedAt: TIME,
};
const API_TOKEN_REQUIRED = ['tokenId', 'ownerId', 'role', 'name', 'createdAt', 'createdBy'];

export const IDENTITY_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  Principal: {
    type: 'object',
    description:
      'Who the request is (GET /me): owner, role, how it authenticated, which credential',
    required: ['ownerId', 'role', 'method', 'subject'],
    properties: {
      ownerId: OWNER_ID,
      role: ROLE,
      method: { type: 'string', enum: ['api_token', 'operator_token', 'google_id_token', 'iap'] },
      subject: { type: 'string', description: 'tok_…, operator, google:<email> or iap:<email>' },
    },
  },
  ApiToken: {
    type: 'object',
    description: 'contracts/api_token.schema.json: a stored token, never the secret',
    required: API_TOKEN_REQUIRED,
    properties: API_TOKEN_PROPERTIES,
  },
  ApiTokenCreated: {
    type: 'object',
    description: 'The new token: `token` is in this answer and nowhere else, ever',
    required: [...API_TOKEN_REQUIRED, 'token'],
    properties: { ...API_TOKEN_PROPERTIES, token: { type: 'string', pattern: '^tda_' } },
  },
  ApiTokenRequest: {
    type: 'object',
    description: 'contracts/api_token_request.schema.json',
    required: ['ownerId', 'role', 'name'],
    properties: {
      ownerId: OWNER_ID,
      role: ROLE,
      name: { type: 'string', minLength: 1, maxLength: 100 },
      expiresInDays: { type: 'integer', minimum: 1, maximum: 3650 },
    },
    additionalProperties: false,
  },
  ApiTokenList: {
    type: 'object',
    required: ['tokens'],
    properties: { tokens: { type: 'array', items: ref('ApiToken') } },
  },
  UserIdentity: {
    type: 'object',
    description: 'contracts/user_identity.schema.json: a Google account mapped to an owner',
    required: ['email', 'ownerId', 'role', 'createdAt', 'createdBy'],
    properties: {
      email: { type: 'string' },
      ownerId: OWNER_ID,
      role: ROLE,
      createdAt: TIME,
      createdBy: { type: 'string' },
    },
  },
  UserIdentityRequest: {
    type: 'object',
    description: 'contracts/user_identity_request.schema.json',
    required: ['ownerId', 'role'],
    properties: { ownerId: OWNER_ID, role: ROLE },
    additionalProperties: false,
  },
  UserIdentityList: {
    type: 'object',
    required: ['identities'],
    properties: { identities: { type: 'array', items: ref('UserIdentity') } },
  },
};

const body = (name: string): Json => ({
  required: true,
  content: { 'application/json': { schema: ref(name) } },
});

export const IDENTITY_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/me': {
    get: {
      operationId: 'whoAmI',
      summary: 'The caller: owner, role, how it authenticated (the console sign-in check)',
      responses: { '200': json(ref('Principal'), 'The principal'), ...COMMON_ERRORS },
    },
  },
  '/admin/tokens': {
    post: {
      operationId: 'createApiToken',
      summary: 'Create an API token for an owner and a role (admin); the token is shown once',
      requestBody: body('ApiTokenRequest'),
      responses: {
        '201': json(ref('ApiTokenCreated'), 'The token and its record'),
        '400': error('INVALID_REQUEST: details.issues'),
        ...COMMON_ERRORS,
      },
    },
    get: {
      operationId: 'listApiTokens',
      summary: 'API tokens, newest first, never the secrets (admin)',
      parameters: [{ name: 'ownerId', in: 'query', required: false, schema: OWNER_ID }],
      responses: { '200': json(ref('ApiTokenList'), 'The tokens'), ...COMMON_ERRORS },
    },
  },
  '/admin/tokens/{tokenId}': {
    delete: {
      operationId: 'revokeApiToken',
      summary: 'Revoke a token: refused from the next request on (admin; idempotent)',
      parameters: [{ name: 'tokenId', in: 'path', required: true, schema: TOKEN_ID }],
      responses: {
        '200': json(ref('ApiToken'), 'The revoked token (a second revoke keeps the first time)'),
        '404': error('NOT_FOUND: no such token'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/admin/identities': {
    get: {
      operationId: 'listUserIdentities',
      summary: 'Google accounts mapped to owners (admin)',
      responses: { '200': json(ref('UserIdentityList'), 'The mappings'), ...COMMON_ERRORS },
    },
  },
  '/admin/identities/{email}': {
    put: {
      operationId: 'putUserIdentity',
      summary: 'Map a Google account to an owner and a role (admin; replaces)',
      parameters: [EMAIL_PARAM],
      requestBody: body('UserIdentityRequest'),
      responses: {
        '200': json(ref('UserIdentity'), 'The mapping'),
        '400': error('INVALID_REQUEST: not an email, or details.issues'),
        ...COMMON_ERRORS,
      },
    },
    delete: {
      operationId: 'deleteUserIdentity',
      summary: 'Remove a mapping: the account is refused from the next request on (admin)',
      parameters: [EMAIL_PARAM],
      responses: {
        '204': { description: 'Removed' },
        '404': error('NOT_FOUND: no such mapping'),
        ...COMMON_ERRORS,
      },
    },
  },
};
