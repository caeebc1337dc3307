import type { OhlcvCandle } from '@tda/contracts';
import type { ChartSeriesInput } from '../chart-frame';
import fixture from './btc-usd-1m.fixture.json';

/**
 * Real candles for tests: 60 BTC-USD monthly bars (2017-03..2022-02) resampled once from a Yahoo
 * daily CSV that is no longer bundled (libs/market-data ships Binance data now). Frozen on purpose:
 * indicator readings and descriptions are checked against real history that never moves.
 */
export function btcUsdMonthly(): ChartSeriesInput {
  return {
    symbol: fixture.symbol,
    timeframe: '1M',
    candles: fixture.candles.map((c) => ({ ...c })),
  };
}

/** The same bars plus the still-forming 2022-03 bucket (complete: false). */
export function btcUsdMonthlyWithFormingBar(): ChartSeriesInput {
  const forming: OhlcvCandle = { ...fixture.formingCandle, complete: false };
  return { ...btcUsdMonthly(), candles: [...btcUsdMonthly().candles, forming] };
}

export { decodePngScanlines } from './png-decode';
export { parabolicCloses, syntheticSeries } from './synthetic-series';
