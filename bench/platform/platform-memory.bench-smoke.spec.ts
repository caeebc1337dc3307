import { describe, it } from 'vitest';
import { expectPlatformSmoke } from './platform-smoke.checks';
import { runPlatformMemoryBench } from './platform.bench';

/** The platform part on the embedded backend, in smoke mode: the wiring, the tables, the budget. */
describe('bench platform-memory (smoke)', () => {
  it('measures floors, hops, throughput and cost of no-op runs in memory', async () => {
    expectPlatformSmoke(await runPlatformMemoryBench({ smoke: true }));
  });
});
