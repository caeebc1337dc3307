import { ACCOUNT_ID_PATTERN, ACCOUNT_LIST_LIMIT_MAX } from '@tda/accounts';
import { DEFAULT_ACCOUNT_LIST_LIMIT } from '../accounts/account-request';
import { COMMON_ERRORS, OWNER_PARAM, error, json, ref, type Json } from './openapi-parts';

/*
 * The OpenAPI paths and schemas of the accounts API, spread into openapi.document.ts. The
 * document itself is contracts/account.schema.json; these name its fields (abridged).
 */

const ACCOUNT_ID = { type: 'string', pattern: ACCOUNT_ID_PATTERN.source };
const ACCOUNT_ID_PARAM = { name: 'accountId', in: 'path', required: true, schema: ACCOUNT_ID };
const IF_MATCH_PARAM = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'The ETag of a read: the write applies only to that version (else 409)',
  schema: { type: 'string' },
};
const ETAG = { ETag: { description: 'The account version', schema: { type: 'string' } } };

const POSITION = {
  type: 'object',
  required: ['symbol', 'side', 'size', 'averageEntry'],
  properties: {
    symbol: { type: 'string' },
    side: { type: 'string', enum: ['long', 'short'] },
    size: { type: 'number', exclusiveMinimum: 0 },
    averageEntry: { type: 'number', exclusiveMinimum: 0 },
    openedAt: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
};
const RISK_LIMITS = {
  type: 'object',
  required: ['maxPositionFraction'],
  properties: {
    maxPositionFraction: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    maxRiskPerTradeFraction: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
  },
  additionalProperties: false,
};
const EDITABLE = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  cash: { type: 'number', minimum: 0 },
  positions: { type: 'array', maxItems: 200, items: POSITION },
  riskLimits: RISK_LIMITS,
};

export const ACCOUNTS_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  Account: {
    type: 'object',
    description: 'accounts/{accountId} (abridged; see contracts/account.schema.json).',
    required: [
      'schemaVersion',
      'accountId',
      'ownerId',
      'name',
      'quoteCurrency',
      'cash',
      'positions',
      'riskLimits',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      schemaVersion: { type: 'integer' },
      accountId: ACCOUNT_ID,
      ownerId: { type: 'string' },
      quoteCurrency: { type: 'string', pattern: '^[A-Z0-9]{2,10}$' },
      exchange: { type: 'string', description: 'ccxt id: the live exchange account' },
      ...EDITABLE,
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
    },
  },
  AccountCreateRequest: {
    type: 'object',
    required: ['accountId', 'quoteCurrency'],
    description:
      'A paper account (cash required) or, with `exchange`, the live exchange account of the ACCOUNT_EXPORT worker (no cash or positions). Defaults: name = accountId, positions [], riskLimits {maxPositionFraction: 0.1}.',
    properties: {
      accountId: ACCOUNT_ID,
      quoteCurrency: { type: 'string', pattern: '^[A-Z0-9]{2,10}$' },
      exchange: { type: 'string', pattern: '^[a-z0-9]{2,30}$' },
      ...EDITABLE,
    },
    additionalProperties: false,
  },
  AccountReplaceRequest: {
    type: 'object',
    description: 'The fields to replace (each as a whole); at least one.',
    properties: EDITABLE,
    additionalProperties: false,
    minProperties: 1,
  },
  AccountListPage: {
    type: 'object',
    required: ['accounts', 'nextCursor'],
    properties: {
      accounts: { type: 'array', items: ref('Account') },
      nextCursor: { type: ['string', 'null'], description: 'null on the last page' },
    },
  },
};

export const ACCOUNTS_OPENAPI_PATHS: Readonly<Record<string, Json>> = {
  '/accounts': {
    post: {
      operationId: 'createAccount',
      summary: 'Create an account of the request owner (create-only)',
      parameters: [OWNER_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('AccountCreateRequest') } },
      },
      responses: {
        '201': { ...json(ref('Account'), 'Created (Location, ETag)'), headers: ETAG },
        '400': error('INVALID_REQUEST: body or account rules (details.issues)'),
        '409': error('CONFLICT: the accountId is taken (ids are unique across owners)'),
        ...COMMON_ERRORS,
      },
    },
    get: {
      operationId: 'listAccounts',
      summary: "The request owner's accounts by accountId (keyset pagination)",
      parameters: [
        OWNER_PARAM,
        {
          name: 'limit',
          in: 'query',
          schema: {
            type: 'integer',
            minimum: 1,
            maximum: ACCOUNT_LIST_LIMIT_MAX,
            default: DEFAULT_ACCOUNT_LIST_LIMIT,
          },
        },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': json(ref('AccountListPage'), 'One page'),
        '400': error('INVALID_REQUEST: bad limit or cursor, unknown parameter'),
        ...COMMON_ERRORS,
      },
    },
  },
  '/accounts/{accountId}': {
    get: {
      operationId: 'getAccount',
      summary: 'One of your accounts (ETag: its version)',
      parameters: [ACCOUNT_ID_PARAM, OWNER_PARAM],
      responses: {
        '200': { ...json(ref('Account'), 'The account (ETag: its version)'), headers: ETAG },
        '400': error('INVALID_REQUEST: malformed accountId'),
        '404': error("NOT_FOUND: no such account, or another owner's"),
        ...COMMON_ERRORS,
      },
    },
    put: {
      operationId: 'replaceAccount',
      summary: 'Replace name, cash, positions or riskLimits (conditional on the version)',
      parameters: [ACCOUNT_ID_PARAM, OWNER_PARAM, IF_MATCH_PARAM],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('AccountReplaceRequest') } },
      },
      responses: {
        '200': { ...json(ref('Account'), 'The account as written (ETag)'), headers: ETAG },
        '400': error('INVALID_REQUEST: body or account rules (details.issues)'),
        '404': error("NOT_FOUND: no such account, or another owner's"),
        '409': error('CONFLICT (retryable): the account changed since If-Match; read it again'),
        ...COMMON_ERRORS,
      },
    },
    delete: {
      operationId: 'deleteAccount',
      summary: 'Delete one of your accounts',
      parameters: [ACCOUNT_ID_PARAM, OWNER_PARAM, IF_MATCH_PARAM],
      responses: {
        '204': { description: 'Deleted' },
        '400': error('INVALID_REQUEST: malformed accountId'),
        '404': error("NOT_FOUND: no such account, or another owner's"),
        '409': error('CONFLICT (retryable): the account changed since If-Match'),
        ...COMMON_ERRORS,
      },
    },
  },
};
