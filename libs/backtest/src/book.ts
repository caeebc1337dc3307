import type { ExitReason, Trade } from './simulate';

/** Per-variant rates, derived once so the bar loop only multiplies. */
export interface Rates {
  longShort: boolean;
  fraction: number;
  fee: number;
  slip: number;
  stop: number;
  target: number;
  trail: number;
}

/**
 * The account of one variant: cash plus one signed position, and the exit levels of that
 * position. Only fills (rare: a few hundred per run) go through its methods; the bar loop of
 * simulate.ts copies the hot fields into local variables after each fill, so nothing is allocated
 * per bar (trade objects exist only in detailed mode).
 */
export class Book {
  cash = 1;
  /** Signed units: > 0 long, < 0 short. */
  units = 0;
  side = 0;
  entryPrice = 0;
  entryTime = 0;
  /** Cash just before the entry: the trade's pnl is the cash after the exit minus this. */
  entryCash = 0;
  /** Fixed stop-loss level of the open position (±Infinity when off: never touched). */
  stopLevel = 0;
  /** Take-profit level (±Infinity when off). */
  targetLevel = 0;
  /** Trailing-stop level from the entry fill (±Infinity when off); the bar loop moves it. */
  trailLevel = 0;
  /** extreme × trailMul = the trailing level; extreme = best price since entry. */
  trailMul = 1;
  trades = 0;
  wins = 0;
  grossProfit = 0;
  grossLoss = 0;

  constructor(
    readonly r: Rates,
    private readonly log: Trade[] | undefined,
  ) {}

  /** Opens `side` at `price` (before slippage), committing `fraction` of the equity (= cash, flat). */
  open(side: number, price: number, time: number): void {
    const { slip, fraction, fee, stop, target, trail } = this.r;
    const fill = price * (1 + side * slip);
    const notional = fraction * this.cash;
    this.entryCash = this.cash;
    this.units = (side * notional) / fill;
    this.cash -= this.units * fill + notional * fee;
    this.side = side;
    this.entryPrice = fill;
    this.entryTime = time;
    const away = side > 0 ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    this.stopLevel = stop > 0 ? fill * (side > 0 ? 1 - stop : 1 + stop) : away;
    this.trailMul = side > 0 ? 1 - trail : 1 + trail;
    this.trailLevel = trail > 0 ? fill * this.trailMul : away;
    this.targetLevel = target > 0 ? fill * (side > 0 ? 1 + target : 1 - target) : -away;
  }

  /** Closes the position at `price` (before slippage) and books the round trip. */
  close(price: number, time: number, reason: ExitReason): void {
    const fill = price * (1 - this.side * this.r.slip);
    const proceeds = this.units * fill;
    this.cash += proceeds - Math.abs(proceeds) * this.r.fee;
    const pnl = this.cash - this.entryCash;
    this.trades++;
    if (pnl > 0) {
      this.wins++;
      this.grossProfit += pnl;
    } else this.grossLoss -= pnl;
    this.log?.push({
      side: this.side > 0 ? 'long' : 'short',
      entryTime: this.entryTime,
      entryPrice: this.entryPrice,
      exitTime: time,
      exitPrice: fill,
      pnl,
      reason,
    });
    this.units = 0;
    this.side = 0;
  }

  /** Acts on the previous bar's signal at this bar's open (long-only: -1 means flat). */
  applySignal(signal: number, open: number, time: number): void {
    const target = signal < 0 && !this.r.longShort ? 0 : signal;
    if (target === this.side) return;
    if (this.side !== 0) this.close(open, time, 'signal');
    if (target !== 0) this.open(target, open, time);
  }
}
