import { describe, expect, it } from 'vitest';
import { BacktestParamsInvalidError } from './backtest.errors';
import { toCandleArrays, type CandleLike } from './candle-arrays';
import {
  parsePeriod,
  renderWalkForwardMarkdown,
  scoreRecommendation,
  walkForwardAsOfs,
  walkForwardTable,
  type RecommendationScore,
  type RecommendationToScore,
  type WalkForwardItem,
} from './walk-forward';

const DAY = 86_400_000;
type Row = [number, number, number, number];

/** Daily bars from [open, high, low, close]; openTime = index days. */
function candles(rows: readonly Row[]): CandleLike[] {
  return rows.map(([open, high, low, close], i) => ({
    openTime: i * DAY,
    open,
    high,
    low,
    close,
    volume: 1,
  }));
}

const arrays = (c: readonly CandleLike[]) => toCandleArrays(c, DAY);

const FLAT: Row = [100, 100, 100, 100];
/** Bars 0-1 history (1 = signal bar), 2-4 the window of asOf = day 2 + 3 days, 5-6 after it. */
const ROWS: Row[] = [
  FLAT,
  FLAT,
  [100, 104, 99, 103],
  [103, 112, 102, 111],
  [111, 111, 105, 106],
  FLAT,
  FLAT,
];
const NO_COSTS = { feeBps: 0, slippageBps: 0 };
const COSTS = { feeBps: 10, slippageBps: 5 };

function reco(partial: Partial<RecommendationToScore>): RecommendationToScore {
  return { asOf: 2 * DAY, action: 'BUY', horizonDays: 3, ...partial };
}

/** Net return in % of a long/short round trip at market prices, the engine's cost model. */
function netPct(side: 1 | -1, entry: number, exit: number, c: typeof COSTS): number {
  const slip = c.slippageBps / 10_000;
  const fee = c.feeBps / 10_000;
  const units = side / (entry * (1 + side * slip));
  const proceeds = units * exit * (1 - side * slip);
  // equity 1 all in: the entry pays `side` and the fee, the exit gets the proceeds less the fee
  return (-side - fee + proceeds - Math.abs(proceeds) * fee) * 100;
}

describe('scoreRecommendation', () => {
  it('long reaching its first target: take_profit, return ≈ target − costs', () => {
    const score = scoreRecommendation(
      reco({ stopLoss: 95, takeProfit: [110, 120] }),
      arrays(candles(ROWS)),
      COSTS,
    );
    // target 10% above the open, applied by the engine to its slipped fill (100.05)
    const target = 100 * 1.0005 * 1.1;
    expect(score).toMatchObject({
      status: 'scored',
      direction: 'long',
      entryTime: 2 * DAY,
      exitTime: 3 * DAY,
      exitReason: 'take_profit',
      hit: true,
    });
    expect(score.entryPrice).toBeCloseTo(100.05, 10);
    expect(score.exitPrice).toBeCloseTo(target * 0.9995, 10);
    expect(score.returnPct).toBeCloseTo(netPct(1, 100, target, COSTS), 10);
    expect(score.returnPct).toBeGreaterThan(9.7);
    expect(score.returnPct).toBeLessThan(10);
    expect(score.maePct).toBeCloseTo(-1, 12); // lows 99 (entry bar), 102 (exit bar)
    expect(score.buyAndHoldPct).toBeCloseTo(6, 12); // 100 → 106
  });

  it('short reaching its target: a hit, mirrored MAE and a negative buy-and-hold', () => {
    const rows: Row[] = [FLAT, FLAT, [100, 101, 95, 96], [96, 97, 88, 89], [89, 92, 87, 91]];
    const score = scoreRecommendation(
      reco({ action: 'SELL', stopLoss: 108, takeProfit: [90] }),
      arrays(candles(rows)),
      NO_COSTS,
    );
    expect(score).toMatchObject({
      status: 'scored',
      direction: 'short',
      exitTime: 3 * DAY,
      exitReason: 'take_profit',
      hit: true,
    });
    expect(score.exitPrice).toBeCloseTo(90, 10);
    expect(score.returnPct).toBeCloseTo(10, 10);
    expect(score.maePct).toBeCloseTo(-1, 12); // highest high 101 while short from 100
    expect(score.buyAndHoldPct).toBeCloseTo(-9, 12);
  });

  it('a stop: exits at its level, MAE stops there, no re-entry when the price comes back', () => {
    // bar 3 trades down to 90 but the stop at 95 is assumed filled first; bar 4 rallies past
    // the target: a re-entry would make a second trade (the scorer refuses any but one)
    const rows: Row[] = [FLAT, FLAT, [100, 102, 97, 98], [98, 99, 90, 91], [91, 130, 91, 125]];
    const score = scoreRecommendation(
      reco({ stopLoss: 95, takeProfit: [120] }),
      arrays(candles(rows)),
      NO_COSTS,
    );
    expect(score).toMatchObject({
      exitTime: 3 * DAY,
      exitPrice: 95,
      exitReason: 'stop',
      // direction judged at the horizon end, independent of the stop
      hit: true,
    });
    expect(score.returnPct).toBeCloseTo(-5, 10);
    expect(score.maePct).toBeCloseTo(-5, 10);
  });

  it('a stop with costs: MAE is the market level, not the slipped fill', () => {
    const rows: Row[] = [FLAT, FLAT, [100, 102, 97, 98], [98, 99, 90, 91], [91, 92, 91, 92]];
    const score = scoreRecommendation(reco({ stopLoss: 95 }), arrays(candles(rows)), COSTS);
    const level = 100 * 1.0005 * 0.95; // 5% under the open, applied to the fill
    expect(score.exitReason).toBe('stop');
    expect(score.returnPct).toBeCloseTo(netPct(1, 100, level, COSTS), 10);
    expect(score.maePct).toBeCloseTo((level / 100 - 1) * 100, 10);
  });

  it('no stop and no target: exit `end` at the horizon-end close', () => {
    const score = scoreRecommendation(reco({}), arrays(candles(ROWS)), NO_COSTS);
    expect(score).toMatchObject({ exitTime: 4 * DAY, exitPrice: 106, exitReason: 'end' });
    expect(score.returnPct).toBeCloseTo(6, 10);
    expect(score.maePct).toBeCloseTo(-1, 12);
  });

  it('a short without levels that moved up: a miss with a loss', () => {
    const score = scoreRecommendation(reco({ action: 'SELL' }), arrays(candles(ROWS)), NO_COSTS);
    expect(score).toMatchObject({ direction: 'short', hit: false, exitReason: 'end' });
    expect(score.returnPct).toBeCloseTo(-6, 10);
    expect(score.maePct).toBeCloseTo(-12, 10); // high 112 on bar 3
  });

  it('a stop on the wrong side of the entry open exits at once at the open, with costs', () => {
    const c = arrays(candles(ROWS));
    for (const stopLoss of [101, 100]) {
      const score = scoreRecommendation(reco({ stopLoss, takeProfit: [110] }), c, COSTS);
      expect(score).toMatchObject({ entryTime: 2 * DAY, exitTime: 2 * DAY, exitReason: 'stop' });
      expect(score.entryPrice).toBeCloseTo(100 * 1.0005, 10);
      expect(score.exitPrice).toBeCloseTo(100 * 0.9995, 10);
      expect(score.returnPct).toBeCloseTo(netPct(1, 100, 100, COSTS), 10);
      expect(score.returnPct).toBeLessThan(0);
      expect(score.maePct).toBe(0);
      // the horizon still judges the direction
      expect(score.hit).toBe(true);
    }
  });

  it('a short target already passed at the open exits at once as take_profit', () => {
    const score = scoreRecommendation(
      reco({ action: 'SELL', stopLoss: 120, takeProfit: [100.5] }),
      arrays(candles(ROWS)),
      NO_COSTS,
    );
    expect(score).toMatchObject({ exitTime: 2 * DAY, exitPrice: 100, exitReason: 'take_profit' });
    expect(score.returnPct).toBe(0);
  });

  it('pending while the candles do not cover the window, scored once they do', () => {
    const c = candles(ROWS);
    expect(scoreRecommendation(reco({}), arrays(c.slice(0, 4)), NO_COSTS)).toEqual(pending());
    expect(scoreRecommendation(reco({}), arrays(c.slice(0, 5)), NO_COSTS).status).toBe('scored');
    expect(scoreRecommendation(reco({ asOf: 9 * DAY }), arrays(c), NO_COSTS)).toEqual(pending());
    expect(scoreRecommendation(reco({}), arrays([]), NO_COSTS)).toEqual(pending());
    // a hole in the data over the whole window: not scoreable from these candles
    const holed = c.filter((bar) => bar.openTime < 2 * DAY || bar.openTime >= 5 * DAY);
    expect(scoreRecommendation(reco({}), arrays(holed), NO_COSTS)).toEqual(pending());
  });

  it('HOLD and REDUCE: no_trade with buy-and-hold only', () => {
    for (const action of ['HOLD', 'REDUCE'] as const) {
      const score = scoreRecommendation(reco({ action }), arrays(candles(ROWS)), COSTS);
      expect(score).toEqual({
        ...pending(),
        status: 'no_trade',
        buyAndHoldPct: score.buyAndHoldPct,
      });
      expect(score.buyAndHoldPct).toBeCloseTo(6, 12);
    }
  });

  it('asOf inside a bar: the window starts at the next bar open', () => {
    const score = scoreRecommendation(
      reco({ asOf: 2 * DAY + 1, horizonDays: 2 }),
      arrays(candles(ROWS)),
      NO_COSTS,
    );
    expect(score).toMatchObject({ entryTime: 3 * DAY, entryPrice: 103, exitTime: 4 * DAY });
  });

  it('asOf at the first candle: the entry bar stands in as the signal bar', () => {
    const score = scoreRecommendation(reco({ asOf: 0 }), arrays(candles(ROWS)), NO_COSTS);
    expect(score).toMatchObject({ entryTime: 0, exitTime: 2 * DAY, exitReason: 'end' });
    expect(score.returnPct).toBeCloseTo(3, 10);
  });

  it('refuses a horizon that is not positive', () => {
    expect(() =>
      scoreRecommendation(reco({ horizonDays: 0 }), arrays(candles(ROWS)), COSTS),
    ).toThrow(BacktestParamsInvalidError);
  });
});

function pending(): RecommendationScore {
  return {
    status: 'pending',
    direction: null,
    entryTime: null,
    entryPrice: null,
    exitTime: null,
    exitPrice: null,
    exitReason: null,
    hit: null,
    returnPct: null,
    maePct: null,
    buyAndHoldPct: null,
  };
}

describe('scoreRecommendation: no look-ahead of the input', () => {
  const long: RecommendationToScore = reco({ stopLoss: 95, takeProfit: [110] });
  const short: RecommendationToScore = reco({ action: 'SELL', stopLoss: 115 });

  /** A different but well-formed bar for every index that `pick` selects. */
  function mutated(pick: (i: number) => boolean): CandleLike[] {
    return candles(ROWS).map((c, i) =>
      pick(i)
        ? { ...c, open: c.open * 1.3, high: c.high * 1.6, low: c.low * 0.5, close: c.close * 0.7 }
        : c,
    );
  }

  for (const [name, r] of [
    ['long', long],
    ['short', short],
  ] as const) {
    it(`${name}: bars before asOf (even the signal bar) and after the window do not matter`, () => {
      const base = scoreRecommendation(r, arrays(candles(ROWS)), COSTS);
      expect(base.status).toBe('scored');
      for (const pick of [(i: number) => i < 1, (i: number) => i < 2, (i: number) => i > 4]) {
        expect(scoreRecommendation(r, arrays(mutated(pick)), COSTS)).toEqual(base);
      }
      // more history before and more bars after change nothing either
      const longer = [...candles([FLAT, FLAT, ...ROWS, FLAT, FLAT])].map((c) => ({
        ...c,
        openTime: c.openTime - 2 * DAY,
      }));
      expect(scoreRecommendation(r, arrays(longer), COSTS)).toEqual(base);
    });
  }

  it('the check can fail: changing a bar inside the window changes the score', () => {
    const base = scoreRecommendation(long, arrays(candles(ROWS)), COSTS);
    expect(scoreRecommendation(long, arrays(mutated((i) => i === 4)), COSTS)).not.toEqual(base);
    expect(scoreRecommendation(long, arrays(mutated((i) => i === 2)), COSTS)).not.toEqual(base);
  });
});

describe('parsePeriod and walkForwardAsOfs', () => {
  it('parses <n>m|h|d|w', () => {
    expect(parsePeriod('15m')).toBe(15 * 60_000);
    expect(parsePeriod('4h')).toBe(4 * 3_600_000);
    expect(parsePeriod('1d')).toBe(DAY);
    expect(parsePeriod('2w')).toBe(14 * DAY);
    expect(parsePeriod('9999m')).toBe(9999 * 60_000);
  });

  it('refuses anything else with the text in the details', () => {
    for (const text of ['', 'd', '0d', '1y', '1.5h', ' 1d', '1d ', '10000m', '-1d', '1D']) {
      expect(() => parsePeriod(text), text).toThrow(BacktestParamsInvalidError);
      try {
        parsePeriod(text);
      } catch (error) {
        expect((error as BacktestParamsInvalidError).details).toEqual({ period: text });
        expect((error as BacktestParamsInvalidError).message).toMatch(/m, h, d or w/);
      }
    }
  });

  it('lists from, from + every, … up to and including to', () => {
    expect(walkForwardAsOfs(0, 3 * DAY, DAY, 10)).toEqual([0, DAY, 2 * DAY, 3 * DAY]);
    expect(walkForwardAsOfs(0, 3 * DAY - 1, DAY, 10)).toEqual([0, DAY, 2 * DAY]);
    expect(walkForwardAsOfs(5, 5, DAY, 1)).toEqual([5]);
  });

  it('refuses to < from, a period ≤ 0 and more than max points', () => {
    expect(() => walkForwardAsOfs(DAY, 0, DAY, 10)).toThrow(/before/);
    expect(() => walkForwardAsOfs(0, DAY, 0, 10)).toThrow(/positive/);
    expect(() => walkForwardAsOfs(0, DAY, -1, 10)).toThrow(BacktestParamsInvalidError);
    try {
      walkForwardAsOfs(0, 10 * DAY, DAY, 10);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BacktestParamsInvalidError);
      expect((error as BacktestParamsInvalidError).details).toEqual({ count: 11, max: 10 });
    }
  });
});

describe('walkForwardTable and renderWalkForwardMarkdown', () => {
  const scored = (returnPct: number, hit: boolean, maePct: number, buyAndHoldPct: number) => ({
    ...pending(),
    status: 'scored' as const,
    direction: 'long' as const,
    hit,
    returnPct,
    maePct,
    buyAndHoldPct,
  });
  const a = { provider: 'openai', modelName: 'gpt', promptId: 'p1' };
  const b = { provider: 'google', modelName: 'gemini', promptId: 'p1' };
  const c = { provider: 'google', modelName: 'gemini', promptId: 'p0' };
  const items: WalkForwardItem[] = [
    { group: a, score: scored(4, true, -1, 2) },
    { group: a, score: scored(-2, false, -3, 1) },
    { group: a, score: scored(10, true, 0, 3) },
    { group: a, score: scored(1, true, -2, 2) },
    { group: a, score: { ...pending(), status: 'no_trade', buyAndHoldPct: 50 } },
    { group: a, score: pending() },
    { group: b, score: pending() },
    { group: b, score: { ...pending(), status: 'no_trade', buyAndHoldPct: 1 } },
    { group: c, score: scored(-1, false, -4, -2) },
  ];

  it('one row per group, sorted, with the median of an even count and nulls without trades', () => {
    const rows = walkForwardTable(items);
    expect(rows.map((r) => [r.provider, r.promptId])).toEqual([
      ['google', 'p0'],
      ['google', 'p1'],
      ['openai', 'p1'],
    ]);
    expect(rows[2]).toEqual({
      ...a,
      count: 6,
      pending: 1,
      noTrade: 1,
      trades: 4,
      hitRatePct: 75,
      meanReturnPct: 3.25,
      medianReturnPct: 2.5, // (1 + 4) / 2
      meanMaePct: -1.5,
      buyAndHoldMeanPct: 2, // the trades' windows only (not the HOLD's 50)
      excessVsBuyAndHoldPct: 1.25,
    });
    expect(rows[1]).toEqual({
      ...b,
      count: 2,
      pending: 1,
      noTrade: 1,
      trades: 0,
      hitRatePct: null,
      meanReturnPct: null,
      medianReturnPct: null,
      meanMaePct: null,
      buyAndHoldMeanPct: null,
      excessVsBuyAndHoldPct: null,
    });
    expect(rows[0]).toMatchObject({ trades: 1, medianReturnPct: -1, excessVsBuyAndHoldPct: 1 });
    expect(walkForwardTable([])).toEqual([]);
  });

  it('renders 2-decimal numbers and — for null', () => {
    const md = renderWalkForwardMarkdown(walkForwardTable(items));
    const lines = md.trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^\| provider \| model \| prompt \| count \|/);
    expect(lines[2]).toBe(
      '| google | gemini | p0 | 1 | 0 | 0 | 1 | 0.00 | -1.00 | -1.00 | -4.00 | -2.00 | 1.00 |',
    );
    expect(lines[3]).toBe('| google | gemini | p1 | 2 | 1 | 1 | 0 | — | — | — | — | — | — |');
    expect(lines[4]).toContain('| 75.00 | 3.25 | 2.50 | -1.50 | 2.00 | 1.25 |');
  });
});
