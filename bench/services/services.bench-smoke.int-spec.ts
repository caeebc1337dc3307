import { emulatorEndpoints } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { runServicesBench, type ServicesData } from './services.bench';

/** The services part in smoke mode on the test emulators: two bundles, one try each, no speed. */
describe('bench services (smoke)', () => {
  it('starts bundles, loads the API, renders every chart template and runs a report', async () => {
    const result = await runServicesBench({ smoke: true, endpoints: emulatorEndpoints() });
    const data = result.data as ServicesData;
    expect(data.coldStarts.map((r) => r.service)).toEqual(['orchestrator', 'worker-ohlcv-export']);
    for (const row of data.coldStarts) {
      expect(row.readyMs).toHaveLength(1);
      expect(row.idleRssMiB).toBeGreaterThan(0);
    }
    expect(data.api.rows.map((r) => [r.route, r.errors])).toEqual([
      ['GET /runs/{id}', 0],
      ['POST /runs (one owner)', 0],
      ['POST /runs (50 owners)', 0],
    ]);
    expect(data.charts.length).toBeGreaterThanOrEqual(4);
    for (const chart of data.charts) expect(chart.bytes).toBeGreaterThan(0);
    expect(data.steps.map((r) => r.stepType).sort()).toEqual([
      'CHART_EXPORT',
      'LLM_REPORT',
      'OHLCV_EXPORT',
    ]);
    expect(result.markdown).toContain('| bundle | ready ms (best) |');
  }, 240_000);
});
