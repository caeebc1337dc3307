import type {
  AccountSnapshot,
  ChartsManifest,
  LlmExecutionMetadata,
  LlmRecommendationFile,
  LlmReportFile,
  OhlcvExport,
  StepType,
} from '../api/api-types';

/**
 * What the step panel previews of a step's primary artifact (GET …/artifact). The contract is
 * chosen by step type (StepArtifact's x-tda-contracts); a light shape check guards against a
 * file that does not follow it, which is then shown as plain JSON.
 */
export type ArtifactView =
  | { kind: 'charts'; manifest: ChartsManifest }
  | { kind: 'ohlcv'; export: OhlcvExport }
  | { kind: 'report'; file: LlmReportFile }
  | { kind: 'recommendation'; file: LlmRecommendationFile }
  | { kind: 'account'; snapshot: AccountSnapshot }
  | { kind: 'json'; value: unknown };

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function hasArrays(value: Record<string, unknown> | undefined, ...keys: string[]): boolean {
  return value !== undefined && keys.every((k) => Array.isArray(value[k]));
}

export function artifactView(stepType: StepType, artifact: unknown): ArtifactView {
  const top = record(artifact);
  const output = record(top?.['output']);
  switch (stepType) {
    case 'CHART_EXPORT':
      if (hasArrays(top, 'items', 'failures'))
        return { kind: 'charts', manifest: artifact as ChartsManifest };
      break;
    case 'OHLCV_EXPORT':
      if (hasArrays(top, 'candles')) return { kind: 'ohlcv', export: artifact as OhlcvExport };
      break;
    case 'LLM_REPORT':
      if (
        record(top?.['metadata']) &&
        typeof record(output?.['summary'])?.['markdown'] === 'string'
      ) {
        return { kind: 'report', file: artifact as LlmReportFile };
      }
      break;
    case 'LLM_RECOMMENDATION':
      if (record(top?.['metadata']) && typeof output?.['action'] === 'string') {
        return { kind: 'recommendation', file: artifact as LlmRecommendationFile };
      }
      break;
    case 'ACCOUNT_EXPORT':
      if (hasArrays(top, 'positions'))
        return { kind: 'account', snapshot: artifact as AccountSnapshot };
      break;
    default:
      break;
  }
  return { kind: 'json', value: artifact };
}

/** The file name a chart is served under (GET …/files/{fileName}): its object's basename. */
export function chartFileName(gcsUri: string): string {
  return gcsUri.slice(gcsUri.lastIndexOf('/') + 1);
}

/** The newest `count` candles, newest first (the export is oldest first). */
export function lastCandles(data: OhlcvExport, count = 20): OhlcvExport['candles'][number][] {
  return data.candles.slice(-count).reverse();
}

/**
 * Seed 002's model metadata of an LLM step, for people: model, provider, tokens, requests, the
 * structured-output repair. Built field by field from the execution metadata (outputs.execution
 * .llm, or the artifact's metadata.llm), so nothing else — never prompt text — can reach the page.
 */
export interface ModelMetadata {
  model: string | undefined;
  modelVersion: string | undefined;
  provider: string | undefined;
  promptId: string | undefined;
  schemaId: string | undefined;
  finishReason: string | undefined;
  promptTokens: number | undefined;
  outputTokens: number | undefined;
  thoughtsTokens: number | undefined;
  totalTokens: number | undefined;
  /** Model calls: 1, or 2 when one structured-output repair ran. */
  requests: number | undefined;
  repaired: boolean;
  requestId: string | undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const int = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** `llm` is outputs.execution.llm (or metadata.llm); the artifact metadata adds modelName, provider, .... */
export function modelMetadata(
  llm: Partial<LlmExecutionMetadata> | Record<string, unknown> | undefined,
  artifactMetadata: object = {},
): ModelMetadata | undefined {
  const names = artifactMetadata as Record<string, unknown>;
  const source = record(llm);
  if (source === undefined) return undefined;
  const usage = record(source['usageMetadata']) ?? {};
  const requests = int(record(source['attempts'])?.['total']);
  return {
    model: str(source['modelName']) ?? str(names['modelName']),
    modelVersion: str(source['modelVersion']),
    provider: str(source['provider']) ?? str(names['provider']),
    promptId: str(source['promptId']) ?? str(names['promptId']),
    schemaId: str(source['schemaId']) ?? str(names['schemaId']),
    finishReason: str(source['finishReason']),
    promptTokens: int(usage['promptTokenCount']),
    outputTokens: int(usage['candidatesTokenCount']),
    thoughtsTokens: int(usage['thoughtsTokenCount']),
    totalTokens: int(usage['totalTokenCount']),
    requests,
    repaired: requests !== undefined && requests > 1,
    requestId: str(source['requestId']),
  };
}
