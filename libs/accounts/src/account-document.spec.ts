import { readSchema } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_ID_PATTERN, marketOf } from './account-document';
import { decodeAccountCursor, encodeAccountCursor } from './account-list';
import { InvalidAccountListQueryError } from './account-store.errors';

describe('account documents', () => {
  it('ACCOUNT_ID_PATTERN is the contract’s AccountId', () => {
    const defs = readSchema('common')['$defs'] as Record<string, { pattern: string }>;
    expect(ACCOUNT_ID_PATTERN.source).toBe(defs['AccountId']?.pattern);
  });

  it.each([
    ['BTC-USDT', { base: 'BTC', quote: 'USDT' }],
    ['btc/usdt', { base: 'BTC', quote: 'USDT' }],
    ['ETHUSDT', { base: 'ETH', quote: 'USDT' }],
    ['ETH-BTC', undefined],
    ['USDT', undefined],
  ])('marketOf(%s) in USDT', (symbol, market) => {
    expect(marketOf(symbol, 'USDT')).toEqual(market);
  });

  it('cursors round-trip, and only this store’s exact bytes are accepted', () => {
    expect(decodeAccountCursor(encodeAccountCursor('demo'))).toBe('demo');
    const foreign = Buffer.from(JSON.stringify({ v: 1, after: 'a/b' })).toString('base64url');
    expect(() => decodeAccountCursor(foreign)).toThrow(InvalidAccountListQueryError);
    expect(() => decodeAccountCursor(`${encodeAccountCursor('demo')}A`)).toThrow(
      InvalidAccountListQueryError,
    );
  });
});
