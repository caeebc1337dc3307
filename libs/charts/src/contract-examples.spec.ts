import {
  type ChartsManifest,
  type OhlcvExport,
  type ValidationResult,
  validate,
} from '@tda/contracts';
import { contractOfExample, exampleFileNames, loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { ChartRenderer } from './chart.renderer';

function examples<T>(contract: string, check: (data: unknown) => ValidationResult<T>): T[] {
  return exampleFileNames()
    .filter((file) => contractOfExample(file) === contract)
    .map((file) => {
      const result = check(loadExample(file));
      if (!result.ok) throw new Error(`${file}: ${JSON.stringify(result.issues)}`);
      return result.value;
    });
}

const exports = examples('ohlcv_export', validate.ohlcvExport);
const manifests = examples('charts_manifest', validate.chartsManifest).filter(
  (m) => m.items.length > 0,
);

/** The OHLCV example a manifest was drawn from (its ohlcvGcsUri ends in <stepId>.json). */
function sourceOf(manifest: ChartsManifest): OhlcvExport {
  const uri = manifest.ohlcvGcsUri ?? '';
  const found = exports.find((e) => uri.endsWith(`/${e.stepId}.json`));
  if (found === undefined) throw new Error(`no ohlcv_export example for '${uri}'`);
  return found;
}

// The contract examples quote chart descriptions a reader (and the LLM step) trusts: they must be
// what this renderer says about the example candles, not prose that drifts from the data.
describe('contracts/examples charts manifests', () => {
  const renderer = new ChartRenderer();

  it.each(manifests.map((m) => [m.stepId, m] as const))(
    '%s: every item is what the renderer draws from the OHLCV example',
    async (_stepId, manifest) => {
      const ohlcv = sourceOf(manifest);
      const series = { symbol: ohlcv.symbol, timeframe: ohlcv.timeframe, candles: ohlcv.candles };
      expect(manifest.symbol).toBe(ohlcv.symbol);
      for (const item of manifest.items) {
        const request = manifest.requested.find((r) => r.chartTemplateId === item.chartTemplateId);
        if (request === undefined) throw new Error(`${item.chartTemplateId} was not requested`);
        const chart = await renderer.render(renderer.bind(request), series);
        expect({ width: item.width, height: item.height, description: item.description }).toEqual({
          width: chart.width,
          height: chart.height,
          description: chart.description,
        });
      }
    },
    30_000,
  );
});
