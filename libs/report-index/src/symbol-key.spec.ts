import { describe, expect, it } from 'vitest';
import { parseSymbolKey, symbolKeyOf, SYMBOL_KEY_PATTERN } from './symbol-key';

describe('symbolKeyOf', () => {
  it('makes BTC-USDT, BTC/USDT, btcusdt and BTCUSDT one key', () => {
    for (const symbol of ['BTC-USDT', 'BTC/USDT', 'btcusdt', 'BTCUSDT', ' btc-usdt ']) {
      expect(symbolKeyOf(symbol)).toBe('BTCUSDT');
    }
    expect(SYMBOL_KEY_PATTERN.test(symbolKeyOf('ETH/USD'))).toBe(true);
  });

  it('parses only trading symbols', () => {
    expect(parseSymbolKey('eth-usdt')).toBe('ETHUSDT');
    for (const bad of ['', 'B', 'BTC--USDT', 'BTC.USDT', 'BTC/USDT/X']) {
      expect(parseSymbolKey(bad)).toBeUndefined();
    }
  });
});
