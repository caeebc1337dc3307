import { emulatorEndpoints } from '@tda/test-support';
import { describe, it } from 'vitest';
import { expectPlatformSmoke } from './platform-smoke.checks';
import { runPlatformBench } from './platform.bench';

/** The platform part in smoke mode on the test emulators: the wiring, the tables, the budget. */
describe('bench platform (smoke)', () => {
  it('measures floors, hops, throughput and cost of no-op runs on the emulators', async () => {
    expectPlatformSmoke(await runPlatformBench({ smoke: true, endpoints: emulatorEndpoints() }));
  });
});
