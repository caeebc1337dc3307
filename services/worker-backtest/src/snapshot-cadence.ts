/** Seed 003 snapshot cadence: no more often than every `seconds` and `variantsStep` variants. */
export interface SnapshotCadenceSettings {
  snapshotMs: number;
  variantsStep: number;
}

/**
 * Decides when a best-so-far snapshot is due: once at least `snapshotMs` passed AND at least
 * `variantsStep` variants were scored since the last one, and none is in flight.
 */
export class SnapshotCadence {
  private lastAt = Number.NEGATIVE_INFINITY;
  private lastProcessed = 0;
  private inFlight = false;

  constructor(
    private readonly settings: SnapshotCadenceSettings,
    private readonly now: () => number,
  ) {}

  due(processed: number): boolean {
    if (this.inFlight) return false;
    const elapsed = this.now() - this.lastAt;
    return (
      elapsed >= this.settings.snapshotMs &&
      processed - this.lastProcessed >= this.settings.variantsStep
    );
  }

  started(processed: number): void {
    this.inFlight = true;
    this.lastAt = this.now();
    this.lastProcessed = processed;
  }

  finished(): void {
    this.inFlight = false;
  }
}
