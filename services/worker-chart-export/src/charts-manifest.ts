import type {
  ChartFailure,
  ChartItem,
  ChartRequest,
  ChartsManifest,
  ErrorCode,
  Timeframe,
} from '@tda/contracts';
import type { StepResult } from '@tda/worker-kit';

export const CHARTS_MANIFEST_SCHEMA_VERSION = 1;

export interface ManifestHeader {
  runId: string;
  stepId: string;
  symbol: string;
  timeframe: Timeframe;
  /** The OHLCV export's asOf: the charts describe the same moment as the data. */
  asOf: string;
  ohlcvGcsUri: string;
  minImages: number;
}

/** Sorted keys all the way down: Firestore does not promise the key order of a stored map. */
export function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonicalize((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * The manifest in the contract's field order. Everything in it is derived from the inputs and
 * the rendered bytes (no wall-clock time), so a re-execution produces the same bytes.
 */
export function buildChartsManifest(
  header: ManifestHeader,
  requested: readonly ChartRequest[],
  items: readonly ChartItem[],
  failures: readonly ChartFailure[],
): ChartsManifest {
  const [first, ...rest] = requested;
  if (first === undefined) throw new Error('a charts manifest needs at least one request');
  return {
    schemaVersion: CHARTS_MANIFEST_SCHEMA_VERSION,
    runId: header.runId,
    stepId: header.stepId,
    symbol: header.symbol,
    timeframe: header.timeframe,
    asOf: header.asOf,
    ohlcvGcsUri: header.ohlcvGcsUri,
    minImages: header.minImages,
    requested: [first, ...rest],
    items: [...items],
    failures: [...failures],
    status: items.length >= header.minImages ? 'SUCCEEDED' : 'FAILED',
  };
}

export function serializeManifest(manifest: ChartsManifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
}

/**
 * seed 000 partial-success rule, shared by execute and recovery so both finalize alike:
 * items >= minImages -> SUCCEEDED; otherwise FAILED with the manifest still written. The code is
 * the failures' common code when they agree (e.g. all INTERNAL_ERROR), else INTERNAL_ERROR.
 */
export function manifestOutcome(
  manifest: ChartsManifest,
  manifestUri: string,
): Pick<StepResult, 'outputs' | 'execution' | 'failure'> {
  const bytes = manifest.items.reduce((sum, item) => sum + item.bytes, 0);
  const outputs = { outputsManifestGcsUri: manifestUri };
  const execution = {
    charts: {
      requested: manifest.requested.length,
      rendered: manifest.items.length,
      failed: manifest.failures.length,
      minImages: manifest.minImages,
      bytes,
    },
  };
  if (manifest.items.length >= manifest.minImages) return { outputs, execution };
  const codes = [...new Set(manifest.failures.map((f) => f.code))];
  const code: ErrorCode =
    codes.length === 1 && codes[0] !== undefined ? codes[0] : 'INTERNAL_ERROR';
  return {
    outputs,
    execution,
    failure: {
      code,
      message: `only ${manifest.items.length} of ${manifest.requested.length} charts rendered (minImages=${manifest.minImages})`,
      details: {
        outputsManifestGcsUri: manifestUri,
        rendered: manifest.items.length,
        requested: manifest.requested.length,
        minImages: manifest.minImages,
        failures: manifest.failures.map((f) => ({
          chartTemplateId: f.chartTemplateId,
          code: f.code,
        })),
      },
    },
  };
}
