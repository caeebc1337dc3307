/**
 * `BTC/usdt`, `btc-usdt`, `BTCUSDT` → `BTCUSDT`: the key user-written symbols are matched by, so
 * that every spelling the contracts allow (BASE-QUOTE, BASE/QUOTE, BASEQUOTE; any case) works.
 */
export function compactSymbol(symbol: string): string {
  return symbol.trim().toUpperCase().replace(/[-/]/g, '');
}
