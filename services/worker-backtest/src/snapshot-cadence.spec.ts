import { describe, expect, it } from 'vitest';
import { SnapshotCadence } from './snapshot-cadence';

describe('SnapshotCadence (seed 003 snapshot_seconds / snapshot_variants_step)', () => {
  it('is due only when both the time and the variants since the last snapshot are reached', () => {
    let now = 0;
    const cadence = new SnapshotCadence({ snapshotMs: 5_000, variantsStep: 1_000 }, () => now);
    expect(cadence.due(999)).toBe(false); // fewer variants than the step so far
    expect(cadence.due(1_000)).toBe(true); // the first one
    cadence.started(1_000);
    cadence.finished();
    now = 6_000;
    expect(cadence.due(1_500)).toBe(false); // time passed, too few variants
    now = 1_000;
    expect(cadence.due(5_000)).toBe(false); // enough variants, too soon
    now = 6_000;
    expect(cadence.due(2_000)).toBe(true);
  });

  it('is never due while a write is in flight', () => {
    let now = 0;
    const cadence = new SnapshotCadence({ snapshotMs: 0, variantsStep: 1 }, () => now);
    cadence.started(0);
    now = 60_000;
    expect(cadence.due(1_000_000)).toBe(false);
    cadence.finished();
    expect(cadence.due(1_000_000)).toBe(true);
  });
});
