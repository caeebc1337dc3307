import { InvalidAccountListQueryError } from './account-store.errors';
import { isAccountId } from './account-document';
import { ACCOUNT_LIST_LIMIT_MAX, type AccountListQuery } from './account-store.port';

/** Bumped if the cursor payload changes, so an old cursor is refused instead of misread. */
const CURSOR_VERSION = 1;

export function encodeAccountCursor(afterAccountId: string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: afterAccountId }), 'utf8').toString(
    'base64url',
  );
}

/** The accountId a cursor continues after; InvalidAccountListQueryError for foreign tokens. */
export function decodeAccountCursor(cursor: string): string {
  if (cursor.length === 0 || cursor.length > 256 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw new InvalidAccountListQueryError('cursor is not a base64url token');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidAccountListQueryError('not a cursor of this store');
  }
  const { v, after } = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<
    string,
    unknown
  >;
  if (v !== CURSOR_VERSION || typeof after !== 'string' || !isAccountId(after)) {
    throw new InvalidAccountListQueryError('not a cursor of this store');
  }
  // Only the exact bytes this store produced (no re-encoded or padded variants).
  if (encodeAccountCursor(after) !== cursor) {
    throw new InvalidAccountListQueryError('not a cursor of this store');
  }
  return after;
}

export interface ValidAccountListQuery {
  ownerId: string;
  limit: number;
  after: string | null;
}

export function validateAccountListQuery(query: AccountListQuery): ValidAccountListQuery {
  const { ownerId, limit, cursor } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > ACCOUNT_LIST_LIMIT_MAX) {
    throw new InvalidAccountListQueryError(
      `limit must be an integer in 1..${ACCOUNT_LIST_LIMIT_MAX}`,
      {
        limit,
      },
    );
  }
  if (typeof ownerId !== 'string' || ownerId === '') {
    throw new InvalidAccountListQueryError('ownerId is required');
  }
  return { ownerId, limit, after: cursor === undefined ? null : decodeAccountCursor(cursor) };
}

/** `limit + 1` rows fetched → one page and the cursor after its last row. */
export function toAccountPage<T extends { accountId: string }>(
  rows: readonly T[],
  limit: number,
): { accounts: T[]; nextCursor: string | null } {
  const accounts = rows.slice(0, limit);
  const last = accounts[accounts.length - 1];
  return {
    accounts,
    nextCursor:
      rows.length > limit && last !== undefined ? encodeAccountCursor(last.accountId) : null,
  };
}
