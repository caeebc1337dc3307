import { StepInputError } from '@tda/worker-kit';

/**
 * What a symbol's news is searched by: its base asset (BTC-USDT, BTC/USDT and BTCUSDT → BTC) and
 * the words an article about it uses — the asset's name from a small table, then the ticker
 * itself. A ticker not in the table is searched by itself.
 */

/** Common names of the base assets a run is likely to have (lower case, as searched). */
export const ASSET_NAMES: Readonly<Record<string, readonly string[]>> = {
  BTC: ['bitcoin'],
  ETH: ['ethereum', 'ether'],
  SOL: ['solana'],
  BNB: ['bnb chain'],
  XRP: ['ripple'],
  ADA: ['cardano'],
  DOGE: ['dogecoin'],
  DOT: ['polkadot'],
  AVAX: ['avalanche'],
  LINK: ['chainlink'],
  LTC: ['litecoin'],
  TRX: ['tron'],
  TON: ['toncoin'],
  MATIC: ['polygon'],
  POL: ['polygon'],
  ATOM: ['cosmos'],
  XLM: ['stellar'],
  SHIB: ['shiba inu'],
  UNI: ['uniswap'],
  NEAR: ['near protocol'],
  APT: ['aptos'],
  ARB: ['arbitrum'],
  OP: ['optimism'],
  SUI: ['sui network'],
};

/** Quote currencies a compact symbol (BTCUSDT) may end with, longest first. */
const QUOTES = [
  'FDUSD',
  'USDT',
  'USDC',
  'BUSD',
  'TUSD',
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'TRY',
  'BTC',
  'ETH',
  'BNB',
];

/** The base asset of a symbol as the contracts allow it (BASE-QUOTE, BASE/QUOTE, BASEQUOTE). */
export function baseAssetOf(symbol: string): string {
  const upper = symbol.trim().toUpperCase();
  const [base = upper] = upper.split(/[-/]/);
  if (base !== upper) return base;
  const quote = QUOTES.find((q) => upper.endsWith(q) && upper.length - q.length >= 2);
  return quote === undefined ? upper : upper.slice(0, -quote.length);
}

export interface SearchTerms {
  baseAsset: string;
  /** Lower case, the names first, then the ticker; 1..4 terms. */
  terms: [string, ...string[]];
}

/** The terms of a symbol; a ticker of 2 characters is kept only when the table has no name. */
export function searchTermsOf(symbol: string): SearchTerms {
  const baseAsset = baseAssetOf(symbol);
  const names = ASSET_NAMES[baseAsset] ?? [];
  const ticker = baseAsset.toLowerCase();
  const terms = [...names, ...(names.length > 0 && ticker.length < 3 ? [] : [ticker])];
  const [first, ...rest] = [...new Set(terms)].slice(0, 4);
  if (first === undefined) {
    throw new StepInputError(`symbol '${symbol}' has no base asset to search news for`, {
      field: 'symbol',
    });
  }
  return { baseAsset, terms: [first, ...rest] };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether a text mentions one of the terms as a whole word, case-insensitively ("Bitcoin's"
 * matches bitcoin; "bitcoiners" and "rbtc" do not). Feeds are general, so their entries must.
 */
export function mentionsAny(terms: readonly string[], ...texts: (string | undefined)[]): boolean {
  const pattern = new RegExp(
    `(?<![\\p{L}\\p{N}])(?:${terms.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`,
    'iu',
  );
  return texts.some((text) => text !== undefined && pattern.test(text));
}
