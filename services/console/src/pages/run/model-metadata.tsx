import { formatNumber } from '../../model/format';
import type { ModelMetadata } from '../../model/artifacts';

/** Seed 002's model metadata: what model answered, what it cost, whether a repair ran. */
export function ModelMetadataCard({ meta }: { meta: ModelMetadata }) {
  const rows: [string, string | undefined][] = [
    ['Model', meta.model],
    ['Model version', meta.modelVersion !== meta.model ? meta.modelVersion : undefined],
    ['Provider', meta.provider],
    ['Prompt', meta.promptId],
    ['Output schema', meta.schemaId],
    ['Finish reason', meta.finishReason],
    ['Requests', meta.requests === undefined ? undefined : String(meta.requests)],
    [
      'Repair',
      meta.requests === undefined
        ? undefined
        : meta.repaired
          ? 'yes: one structured-output repair ran'
          : 'no',
    ],
    ['Request id', meta.requestId],
  ];
  const tokens: [string, number | undefined][] = [
    ['prompt', meta.promptTokens],
    ['output', meta.outputTokens],
    ['thinking', meta.thoughtsTokens],
    ['total', meta.totalTokens],
  ];
  return (
    <div className="model-card">
      <dl className="facts">
        {rows
          .filter((r): r is [string, string] => r[1] !== undefined)
          .map(([label, value]) => (
            <div key={label} className="fact">
              <dt>{label}</dt>
              <dd className={label === 'Request id' ? 'mono small' : undefined}>{value}</dd>
            </div>
          ))}
      </dl>
      {tokens.some(([, v]) => v !== undefined) && (
        <div className="tokens" aria-label="Tokens">
          {tokens
            .filter((t): t is [string, number] => t[1] !== undefined)
            .map(([label, value]) => (
              <div key={label} className={`token-cell${label === 'total' ? ' is-total' : ''}`}>
                <span className="token-value">{formatNumber(value)}</span>
                <span className="token-label">{label} tokens</span>
              </div>
            ))}
        </div>
      )}
    </div>
  );
}
