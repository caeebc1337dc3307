import { describe, expect, it } from 'vitest';
import { baseAssetOf, mentionsAny, searchTermsOf } from './asset-terms';

describe('asset terms', () => {
  it('finds the base asset in every spelling the contracts allow', () => {
    expect(['BTC-USDT', 'btc/usdt', 'BTCUSDT', 'BTC', 'btcfdusd'].map(baseAssetOf)).toEqual(
      Array(5).fill('BTC'),
    );
    expect(baseAssetOf('ETHBTC')).toBe('ETH');
    expect(baseAssetOf('USDT')).toBe('USDT');
  });

  it('searches the name, then the ticker; a 2-letter ticker with a name is left out', () => {
    expect(searchTermsOf('BTC-USDT')).toEqual({ baseAsset: 'BTC', terms: ['bitcoin', 'btc'] });
    expect(searchTermsOf('ETH/USDT').terms).toEqual(['ethereum', 'ether', 'eth']);
    expect(searchTermsOf('OP-USDT').terms).toEqual(['optimism']);
    expect(searchTermsOf('PEPE-USDT')).toEqual({ baseAsset: 'PEPE', terms: ['pepe'] });
  });

  it('matches whole words, case-insensitively', () => {
    const terms = ['bitcoin', 'btc'];
    expect(mentionsAny(terms, 'BITCOIN rallies')).toBe(true);
    expect(mentionsAny(terms, "Bitcoin's hashrate")).toBe(true);
    expect(mentionsAny(terms, undefined, 'funding (BTC) turns')).toBe(true);
    expect(mentionsAny(terms, 'Bitcoiners rally', 'rBTC bridge')).toBe(false);
    expect(mentionsAny(['shiba inu'], 'Shiba Inu burns tokens')).toBe(true);
  });
});
