import type { AccountSnapshot } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_EXPORT_STEP, accountSnapshotProblem } from './account-export.step-type';

const example = (): AccountSnapshot =>
  loadExample('account_snapshot.example.json') as AccountSnapshot;

describe('ACCOUNT_EXPORT_STEP artifact check', () => {
  it('accepts the example snapshot (valid, consistent)', () => {
    const snapshot = example();
    expect(ACCOUNT_EXPORT_STEP.artifact.validate(snapshot).ok).toBe(true);
    expect(accountSnapshotProblem(snapshot)).toBeUndefined();
    expect(ACCOUNT_EXPORT_STEP.artifact.identity(snapshot)).toEqual({
      runId: snapshot.runId,
      stepId: 'account_export',
    });
  });

  it.each([
    [
      'equity that does not add up',
      (s: AccountSnapshot) => {
        s.equity += 1;
        if (s.positions[0]) s.positions[0].fractionOfEquity = s.positions[0].marketValue / s.equity;
      },
      /equity is not freeCash/,
    ],
    [
      'a market value that is not size × mark',
      (s: AccountSnapshot) => void (s.positions[0] && (s.positions[0].marketValue += 1)),
      /marketValue/,
    ],
    [
      'a P&L of the wrong sign',
      (s: AccountSnapshot) => void (s.positions[0] && (s.positions[0].side = 'short')),
      /unrealizedPnl/,
    ],
    [
      'a mark from a candle that ends after asOf',
      (s: AccountSnapshot) =>
        void (s.prices?.[0] && (s.prices[0].candleOpenTime = '2026-09-20T00:00:00Z')),
      /not a complete 1h candle/,
    ],
    [
      'a mark that is not the symbol’s price',
      (s: AccountSnapshot) => void (s.prices?.[0] && (s.prices[0].price = 1)),
      /markPrice is not/,
    ],
  ])('refuses %s', (_case, spoil, message) => {
    const snapshot = example();
    spoil(snapshot);
    expect(accountSnapshotProblem(snapshot)).toMatch(message);
  });

  it('does not add up an exchange account’s equity (reserved quote, derivative P&L)', () => {
    const snapshot = example();
    snapshot.source = { provider: 'ccxt', exchange: 'binance' };
    snapshot.equity += 200;
    if (snapshot.positions[0]) {
      snapshot.positions[0].fractionOfEquity = snapshot.positions[0].marketValue / snapshot.equity;
    }
    expect(accountSnapshotProblem(snapshot)).toBeUndefined();
  });
});
