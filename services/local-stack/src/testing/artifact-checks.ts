import { validate, type FlowRun, type OhlcvExport } from '@tda/contracts';
import { nextBucketStart } from '@tda/market-data';
import { findStepType } from '@tda/step-types';
import { expect } from 'vitest';
import type { LocalStack } from '../local-stack';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function readJson(stack: LocalStack, uri: string): Promise<unknown> {
  return JSON.parse((await stack.backends.artifacts.read(uri)).toString('utf8'));
}

/**
 * No candle of an export extends past asOf: a complete candle ends at or before it, the one
 * still forming (complete: false) opened before it; and the export says it was cut there.
 */
export function expectCutAt(ohlcv: OhlcvExport, asOf: string): void {
  const limit = Date.parse(asOf);
  expect(ohlcv.asOf).toBe(asOf);
  for (const candle of ohlcv.candles) {
    const open = Date.parse(candle.openTime);
    if (candle.complete === false) expect(open).toBeLessThan(limit);
    else expect(nextBucketStart(open, ohlcv.timeframe)).toBeLessThanOrEqual(limit);
  }
  expect(Date.parse(ohlcv.range.to)).toBeLessThanOrEqual(
    nextBucketStart(limit - 1, ohlcv.timeframe),
  );
}

/** The moment an artifact says it describes, for the artifacts that carry one. */
function asOfOf(artifact: unknown): unknown {
  if (typeof artifact !== 'object' || artifact === null) return undefined;
  const record = artifact as Record<string, unknown>;
  const metadata = record['metadata'] as Record<string, unknown> | undefined;
  return record['asOf'] ?? metadata?.['asOf'];
}

/**
 * Every primary artifact of the run validates against its step type's contract (and the
 * descriptor's check), names its run and step, and states the run's asOf; OHLCV exports hold
 * nothing after it; every chart PNG a manifest lists exists and is a PNG.
 */
export async function expectValidArtifacts(stack: LocalStack, run: FlowRun): Promise<void> {
  const asOf = run.scope.asOf;
  expect(asOf).toBeDefined();
  for (const [stepId, step] of Object.entries(run.steps)) {
    const uri = step.outputs.gcs_uri;
    expect(uri, `${stepId} has an artifact`).toBeDefined();
    const descriptor = findStepType(step.stepType);
    if (uri === undefined || descriptor === undefined) throw new Error(`no contract for ${stepId}`);
    const data = await readJson(stack, uri);
    const checked = descriptor.artifact.validate(data);
    expect(checked.ok ? [] : checked.issues, `${stepId}: ${descriptor.artifact.contract}`).toEqual(
      [],
    );
    if (!checked.ok) continue;
    expect(descriptor.artifact.check?.(checked.value)).toBeUndefined();
    expect(descriptor.artifact.identity(checked.value)).toMatchObject({ runId: run.runId, stepId });
    expect(asOfOf(data), `${stepId} asOf`).toBe(asOf);
    if (step.stepType === 'OHLCV_EXPORT' && asOf !== undefined) {
      expectCutAt(checked.value as OhlcvExport, asOf);
    }
    if (step.stepType === 'CHART_EXPORT') {
      const manifest = validate.chartsManifest(data);
      if (!manifest.ok) throw new Error(`${stepId}: not a charts manifest`);
      for (const item of manifest.value.items) {
        const png = await stack.backends.artifacts.read(item.gcs_uri);
        expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      }
    }
  }
}
