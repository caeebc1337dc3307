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
 * The account of one variant: cash plus one signed position. One instance per variant, mutated in
 * place — the bar loop allocates nothing (trade objects exist only in detailed mode).
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
  /** Best price since entry (highest high long, lowest low short) for the trailing stop. */
  extreme = 0;
  trades = 0;
  wins = 0;
  grossProfit = 0;
  grossLoss = 0;

  constructor(
    private readonly r: Rates,
    private readonly log: Trade[] | undefined,
  ) {}

  /** Opens `side` at `price` (before slippage), committing `fraction` of the equity (= cash, flat). */
  open(side: number, price: number, time: number): void {
    const fill = price * (1 + side * this.r.slip);
    const notional = this.r.fraction * this.cash;
    this.entryCash = this.cash;
    this.units = (side * notional) / fill;
    this.cash -= this.units * fill + notional * this.r.fee;
    this.side = side;
    this.entryPrice = fill;
    this.entryTime = time;
    this.extreme = fill;
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

  /**
   * Intra-bar exits. The order of prices inside a bar is unknown, so the rule is conservative:
   * the stop (or trailing stop) is checked before the take profit, and the trailing reference
   * moves only with bars already completed. A gap beyond a level fills at the open.
   */
  checkExits(open: number, high: number, low: number, time: number): void {
    if (this.side > 0) this.checkLong(open, high, low, time);
    else this.checkShort(open, high, low, time);
  }

  private checkLong(open: number, high: number, low: number, time: number): void {
    const { stop, target, trail } = this.r;
    const stopLevel = stop > 0 ? this.entryPrice * (1 - stop) : -Infinity;
    const trailLevel = trail > 0 ? this.extreme * (1 - trail) : -Infinity;
    const level = Math.max(stopLevel, trailLevel);
    if (low <= level) {
      this.close(Math.min(open, level), time, trailLevel > stopLevel ? 'trailing' : 'stop');
      return;
    }
    const targetLevel = target > 0 ? this.entryPrice * (1 + target) : Infinity;
    if (high >= targetLevel) {
      this.close(Math.max(open, targetLevel), time, 'take_profit');
      return;
    }
    if (high > this.extreme) this.extreme = high;
  }

  private checkShort(open: number, high: number, low: number, time: number): void {
    const { stop, target, trail } = this.r;
    const stopLevel = stop > 0 ? this.entryPrice * (1 + stop) : Infinity;
    const trailLevel = trail > 0 ? this.extreme * (1 + trail) : Infinity;
    const level = Math.min(stopLevel, trailLevel);
    if (high >= level) {
      this.close(Math.max(open, level), time, trailLevel < stopLevel ? 'trailing' : 'stop');
      return;
    }
    const targetLevel = target > 0 ? this.entryPrice * (1 - target) : -Infinity;
    if (low <= targetLevel) {
      this.close(Math.min(open, targetLevel), time, 'take_profit');
      return;
    }
    if (low < this.extreme) this.extreme = low;
  }
}
