import {
  ACCOUNT_ID_PATTERN,
  ACCOUNT_LIST_LIMIT_MAX,
  type AccountChanges,
  type AccountListQuery,
  type NewAccount,
} from '@tda/accounts';
import type { PaperPosition, RiskLimits } from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';
import { strictQuery } from '../runs/run-list-query';

export const DEFAULT_ACCOUNT_LIST_LIMIT = 20;
/** A new account's limits when the request gives none: at most 10% of equity per position. */
export const DEFAULT_RISK_LIMITS: RiskLimits = { maxPositionFraction: 0.1 };

const CREATE_FIELDS = [
  'accountId',
  'name',
  'quoteCurrency',
  'exchange',
  'cash',
  'positions',
  'riskLimits',
] as const;
const REPLACE_FIELDS = ['name', 'cash', 'positions', 'riskLimits'] as const;

function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('the body must be a JSON object', {
      allowedFields: [...allowed],
    });
  }
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidRequestError(`unknown field(s): ${unknown.join(', ')}`, {
      unknownFields: unknown,
      allowedFields: [...allowed],
    });
  }
  return body as Record<string, unknown>;
}

/** 400 for a malformed accountId path parameter (never a store lookup with it). */
export function assertAccountId(accountId: string): void {
  if (!ACCOUNT_ID_PATTERN.test(accountId)) {
    throw new InvalidRequestError(`'${accountId.slice(0, 100)}' is not an accountId`, {
      parameter: 'accountId',
      pattern: ACCOUNT_ID_PATTERN.source,
    });
  }
}

/**
 * POST /accounts body → the account to create for `ownerId`. Only the shape is checked here
 * (object, known fields, required ones present); the store checks the document against
 * account.schema.json and its rules, and its InvalidAccountError is the 400 with the issues.
 */
export function parseCreateAccount(body: unknown, ownerId: string): NewAccount {
  const fields = objectBody(body, CREATE_FIELDS);
  const missing = ['accountId', 'quoteCurrency'].filter((f) => fields[f] === undefined);
  if (fields['exchange'] === undefined && fields['cash'] === undefined) missing.push('cash');
  if (missing.length > 0) {
    throw new InvalidRequestError(`missing field(s): ${missing.join(', ')}`, {
      missingFields: missing,
    });
  }
  const accountId = fields['accountId'];
  if (typeof accountId !== 'string') {
    throw new InvalidRequestError('accountId must be a string', { field: 'accountId' });
  }
  assertAccountId(accountId);
  return {
    accountId,
    ownerId,
    name: (fields['name'] ?? accountId) as string,
    quoteCurrency: fields['quoteCurrency'] as string,
    ...(fields['exchange'] === undefined ? {} : { exchange: fields['exchange'] as string }),
    cash: (fields['cash'] ?? 0) as number,
    positions: (fields['positions'] ?? []) as PaperPosition[],
    riskLimits: (fields['riskLimits'] ?? DEFAULT_RISK_LIMITS) as RiskLimits,
  };
}

/** PUT /accounts/{accountId} body → the fields to replace (at least one). */
export function parseReplaceAccount(body: unknown): AccountChanges {
  const fields = objectBody(body, REPLACE_FIELDS);
  const changes: AccountChanges = {};
  if (fields['name'] !== undefined) changes.name = fields['name'] as string;
  if (fields['cash'] !== undefined) changes.cash = fields['cash'] as number;
  if (fields['positions'] !== undefined) changes.positions = fields['positions'] as PaperPosition[];
  if (fields['riskLimits'] !== undefined) changes.riskLimits = fields['riskLimits'] as RiskLimits;
  if (Object.keys(changes).length === 0) {
    throw new InvalidRequestError(`nothing to change: give ${REPLACE_FIELDS.join(', ')}`, {
      allowedFields: [...REPLACE_FIELDS],
    });
  }
  return changes;
}

/** GET /accounts query → the owner's list query (strict: unknown parameters are a 400). */
export function parseAccountListQuery(
  raw: Readonly<Record<string, unknown>>,
  ownerId: string,
): AccountListQuery {
  const { limit, cursor } = strictQuery(raw, ['limit', 'cursor']);
  const query: AccountListQuery = { ownerId, limit: DEFAULT_ACCOUNT_LIST_LIMIT };
  if (limit !== undefined) {
    const parsed = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(parsed >= 1 && parsed <= ACCOUNT_LIST_LIMIT_MAX)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${ACCOUNT_LIST_LIMIT_MAX}`, {
        parameter: 'limit',
        max: ACCOUNT_LIST_LIMIT_MAX,
      });
    }
    query.limit = parsed;
  }
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/** `If-Match: "<version>"` (quotes optional, `W/` refused: versions are exact). */
export function parseIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*"?([0-9]+(?:\.[0-9]+)?)"?\s*$/.exec(header);
  if (match === null) {
    throw new InvalidRequestError('If-Match must be the ETag of a read of this account', {
      header: 'If-Match',
    });
  }
  return match[1];
}

/** The ETag of an account version. */
export function etagOf(version: string): string {
  return `"${version}"`;
}
