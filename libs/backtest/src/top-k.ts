/** Anything ranked: the score (higher first) and the unique key (tie-break, ascending). */
export interface Ranked {
  score: number;
  key: string;
}

/** NaN ranks last, so a degenerate variant can never displace a real one (and order stays total). */
function scoreOf(x: number): number {
  return Number.isNaN(x) ? Number.NEGATIVE_INFINITY : x;
}

/** True when `a` ranks strictly before `b`: score desc, then key asc (code-unit order). */
export function ranksBefore(a: Ranked, b: Ranked): boolean {
  const sa = scoreOf(a.score);
  const sb = scoreOf(b.score);
  return sa > sb || (sa === sb && a.key < b.key);
}

/**
 * The running top-K: a small sorted array (K is tens to hundreds). A candidate that does not beat
 * the current last is rejected in O(1) without allocation; others are inserted by shifting.
 */
export class TopK<T extends Ranked> {
  private readonly items: T[] = [];

  constructor(readonly capacity: number) {}

  /** Whether a candidate with this score/key would enter (check before building the item). */
  accepts(score: number, key: string): boolean {
    if (this.capacity <= 0) return false;
    if (this.items.length < this.capacity) return true;
    return ranksBefore({ score, key }, this.items[this.items.length - 1] as T);
  }

  offer(item: T): void {
    if (!this.accepts(item.score, item.key)) return;
    let i = this.items.length;
    if (i === this.capacity) i--;
    while (i > 0 && ranksBefore(item, this.items[i - 1] as T)) {
      this.items[i] = this.items[i - 1] as T;
      i--;
    }
    this.items[i] = item;
  }

  /** Best first; a copy (the caller may keep it while the ranking goes on). */
  toArray(): T[] {
    return [...this.items];
  }
}
