import { describe, expect, it } from 'vitest';
import { expectPlatformSmoke } from './platform-smoke.checks';
import { runPlatformMemoryBench } from './platform.bench';

/** The platform part on the embedded backend, in smoke mode: the wiring, the tables, the budget. */
describe('bench platform-memory (smoke)', () => {
  it('measures floors, hops, throughput and cost of no-op runs in memory', async () => {
    const result = await runPlatformMemoryBench({ smoke: true });
    expectPlatformSmoke(result);
    // The chain row again with the artifacts in memory, and what the floors allow a step.
    expect(result.data).toMatchObject({
      withoutDisk: { shape: 'chain of 4, artifacts in memory', outcomes: { SUCCEEDED: 1 } },
    });
    expect(result.markdown).toContain('What the backend allows a chain of 4 step');
  });
});
