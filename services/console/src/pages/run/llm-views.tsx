import type { LlmRecommendationFile, LlmReportFile } from '../../api/api-types';
import { modelMetadata } from '../../model/artifacts';
import { formatFraction, formatNumber, formatUtc } from '../../model/format';
import { JsonView } from '../../ui/json-view';
import { Markdown } from './markdown';
import { ModelMetadataCard } from './model-metadata';

type Json = Record<string, unknown>;

const rec = (v: unknown): Json | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function Levels({ title, levels }: { title: string; levels: unknown[] }) {
  if (levels.length === 0) return null;
  return (
    <div>
      <h4>{title}</h4>
      <ul className="levels">
        {levels.map((raw, i) => {
          const level = rec(raw) ?? {};
          return (
            <li key={i}>
              <span className="level-price num">{formatNumber(num(level['price']))}</span>
              {text(level['strength']) !== undefined && (
                <span className="chip">{text(level['strength'])}</span>
              )}
              <span className="muted">{text(level['rationale'])}</span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function Citations({ citations }: { citations: unknown[] }) {
  if (citations.length === 0) return null;
  return (
    <div>
      <h4>Citations</h4>
      <ul className="citations">
        {citations.map((raw, i) => {
          const c = rec(raw) ?? {};
          return (
            <li key={i}>
              <span className="mono small">{text(c['reportId'])}</span> {text(c['claim'])}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

const KNOWN_DETAILS = [
  'trend',
  'keyLevels',
  'indicators',
  'risks',
  'outlook',
  'confidence',
  'citations',
];

/**
 * The structured findings of a report (llm_report_output_v1 and the aggregate schema). The shape
 * belongs to the registry schema, so each part is read defensively; the rest is shown as JSON.
 */
function ReportDetails({ details }: { details: Json }) {
  const trend = rec(details['trend']);
  const levels = rec(details['keyLevels']);
  const outlook = rec(details['outlook']);
  const rest = Object.fromEntries(
    Object.entries(details).filter(([k]) => !KNOWN_DETAILS.includes(k)),
  );
  const indicators = list(details['indicators']);
  return (
    <div className="report-details">
      {trend !== undefined && (
        <p>
          <strong>Trend:</strong> {text(trend['direction'])} ({text(trend['strength'])}) —{' '}
          {text(trend['rationale'])}
        </p>
      )}
      {levels !== undefined && (
        <div className="two-col">
          <Levels title="Support" levels={list(levels['support'])} />
          <Levels title="Resistance" levels={list(levels['resistance'])} />
        </div>
      )}
      {indicators.length > 0 && (
        <div className="table-wrap">
          <table className="data-table">
            <caption>Indicators</caption>
            <thead>
              <tr>
                <th scope="col">Indicator</th>
                <th scope="col" className="num">
                  Value
                </th>
                <th scope="col">Signal</th>
                <th scope="col">Comment</th>
              </tr>
            </thead>
            <tbody>
              {indicators.map((raw, i) => {
                const row = rec(raw) ?? {};
                return (
                  <tr key={i}>
                    <td>{text(row['name'])}</td>
                    <td className="num">{formatNumber(num(row['value']))}</td>
                    <td>{text(row['signal'])}</td>
                    <td className="muted">{text(row['comment'])}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {outlook !== undefined && (
        <dl className="facts facts-stack">
          {['bias', 'horizon', 'baseCase', 'bullCase', 'bearCase', 'invalidation'].map(
            (key) =>
              text(outlook[key]) !== undefined && (
                <div className="fact" key={key}>
                  <dt>{key.replace(/([A-Z])/g, ' $1').toLowerCase()}</dt>
                  <dd>{text(outlook[key])}</dd>
                </div>
              ),
          )}
          {num(details['confidence']) !== undefined && (
            <div className="fact">
              <dt>confidence</dt>
              <dd>{formatFraction(num(details['confidence']))}</dd>
            </div>
          )}
        </dl>
      )}
      {list(details['risks']).length > 0 && (
        <div>
          <h4>Risks</h4>
          <ul>
            {list(details['risks']).map((r, i) => (
              <li key={i}>{text(r)}</li>
            ))}
          </ul>
        </div>
      )}
      <Citations citations={list(details['citations'])} />
      {Object.keys(rest).length > 0 && <JsonView value={rest} label="other details" />}
    </div>
  );
}

/** `withModel`: show the model metadata too (when the step's outputs do not carry it). */
export function ReportView({ file, withModel }: { file: LlmReportFile; withModel: boolean }) {
  const meta = withModel ? modelMetadata(file.metadata.llm, file.metadata) : undefined;
  return (
    <article className="report">
      <p className="muted small">
        {file.metadata.symbol} {file.metadata.timeframe ?? 'all timeframes'} · as of{' '}
        {formatUtc(file.metadata.asOf)}
      </p>
      <Markdown>{file.output.summary.markdown}</Markdown>
      <ReportDetails details={file.output.details} />
      {meta !== undefined && (
        <section aria-label="Model">
          <h4>Model</h4>
          <ModelMetadataCard meta={meta} />
        </section>
      )}
    </article>
  );
}

const ACTION_TONE: Record<string, string> = {
  BUY: 'success',
  SELL: 'danger',
  REDUCE: 'stopped',
  HOLD: 'idle',
};

export function RecommendationView({
  file,
  withModel,
}: {
  file: LlmRecommendationFile;
  withModel: boolean;
}) {
  const reco = file.output;
  const meta = withModel ? modelMetadata(file.metadata.llm, file.metadata) : undefined;
  const limits = file.metadata.riskLimits;
  const facts: [string, string | undefined][] = [
    [
      'Entry',
      reco.entry === undefined
        ? undefined
        : `${formatNumber(reco.entry.low)} – ${formatNumber(reco.entry.high)}`,
    ],
    ['Stop loss', reco.stopLoss === undefined ? undefined : formatNumber(reco.stopLoss)],
    ['Take profit', reco.takeProfit?.map((t) => formatNumber(t)).join(', ')],
    [
      'Size',
      reco.size === undefined
        ? undefined
        : `${formatFraction(reco.size.fractionOfEquity)} of equity`,
    ],
    ['Horizon', `${reco.horizon.label} (${reco.horizon.days} d)`],
    ['Last close', formatNumber(file.metadata.lastClose)],
    [
      'Position limit',
      limits === undefined
        ? undefined
        : `${formatFraction(limits.maxPositionFraction)} (${limits.source})`,
    ],
    [
      'Risk per trade limit',
      limits?.maxRiskPerTradeFraction === undefined
        ? undefined
        : formatFraction(limits.maxRiskPerTradeFraction),
    ],
  ];
  return (
    <article className="recommendation">
      <div className="reco-head">
        <span className={`action-badge tone-${ACTION_TONE[reco.action] ?? 'idle'}`}>
          {reco.action}
        </span>
        <div
          className="strength"
          aria-label={`Signal strength ${formatFraction(reco.signal_strength)}`}
        >
          <span className="strength-track" aria-hidden="true">
            <span
              className="strength-fill"
              style={{ width: `${Math.round(reco.signal_strength * 100)}%` }}
            />
          </span>
          <span className="small muted">signal {formatFraction(reco.signal_strength)}</span>
        </div>
      </div>
      <p className="reco-headline">{reco.headline}</p>
      <dl className="facts">
        {facts
          .filter((f): f is [string, string] => f[1] !== undefined)
          .map(([label, value]) => (
            <div className="fact" key={label}>
              <dt>{label}</dt>
              <dd className="num">{value}</dd>
            </div>
          ))}
      </dl>
      <Markdown>{reco.rationale.summary}</Markdown>
      <Citations citations={reco.rationale.citations} />
      <div>
        <h4>Risks</h4>
        <ul>
          {reco.risks.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      </div>
      {meta !== undefined && (
        <section aria-label="Model">
          <h4>Model</h4>
          <ModelMetadataCard meta={meta} />
        </section>
      )}
    </article>
  );
}
