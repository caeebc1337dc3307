import { emulatorEndpoints } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { runFloorsBench, type FloorsData } from './floors.bench';

/** The floors part in smoke mode on the test emulators: the wiring and the tables, no speed. */
describe('bench floors (smoke)', () => {
  it('measures a Firestore row per concurrency and the Pub/Sub latency and burst', async () => {
    const result = await runFloorsBench({ smoke: true, endpoints: emulatorEndpoints() });
    const data = result.data as FloorsData;
    expect(data.firestore.map((r) => r.concurrency)).toEqual([1, 8, 32]);
    for (const row of data.firestore) {
      expect(row.ops).toBeGreaterThanOrEqual(row.concurrency * 2);
      expect(row.p50).toBeGreaterThan(0);
      expect(row.p99).toBeGreaterThanOrEqual(row.p50);
      expect(row.opsPerSecond).toBeGreaterThan(0);
    }
    expect(data.pubsub.latency).toMatchObject({ messages: 3 });
    expect(data.pubsub.latency.p50).toBeGreaterThan(0);
    expect(data.pubsub.burst.messages).toBe(5);
    expect(result.markdown).toContain('| concurrency | ops | p50 ms | p90 ms | p99 ms | ops/s |');
    expect(result.markdown).toContain(
      '| messages | p50 ms | p90 ms | p99 ms | burst | burst msg/s |',
    );
  });
});
