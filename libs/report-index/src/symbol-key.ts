import { SYMBOL_PATTERN } from '@tda/contracts';

/** contracts/report_index.schema.json SymbolKey. */
export const SYMBOL_KEY_PATTERN = /^[A-Z0-9]{2,40}$/;

/**
 * A symbol as the index stores and queries it: BASE+QUOTE in upper case without separators, so
 * BTC-USDT, btc/usdt and BTCUSDT are one key (BTCUSDT). The index keeps the symbol as the run
 * wrote it next to it; only queries use the key.
 */
export function symbolKeyOf(symbol: string): string {
  return symbol.trim().toUpperCase().replace(/[-/]/g, '');
}

/** symbolKeyOf for a symbol a user typed; undefined when it is not a trading symbol at all. */
export function parseSymbolKey(symbol: string): string | undefined {
  const trimmed = symbol.trim();
  return SYMBOL_PATTERN.test(trimmed) ? symbolKeyOf(trimmed) : undefined;
}
