import type { AccountSnapshot, ChartsManifest, OhlcvExport } from '../../api/api-types';
import { chartFileName, lastCandles } from '../../model/artifacts';
import { formatFraction, formatMoney, formatNumber, formatUtc } from '../../model/format';
import { ChartImage } from './chart-image';

export function ChartsView({
  manifest,
  runId,
  stepId,
}: {
  manifest: ChartsManifest;
  runId: string;
  stepId: string;
}) {
  return (
    <div className="charts">
      <p className="muted small">
        {manifest.items.length} chart{manifest.items.length === 1 ? '' : 's'} · {manifest.symbol}{' '}
        {manifest.timeframe} · as of {formatUtc(manifest.asOf)}
      </p>
      {manifest.items.map((item) => (
        <figure key={item.gcs_uri} className="chart">
          <ChartImage
            runId={runId}
            stepId={stepId}
            fileName={chartFileName(item.gcs_uri)}
            alt={item.description ?? `${item.kind} chart`}
            width={item.width}
            height={item.height}
          />
          <figcaption>
            <strong>{item.kind}</strong>{' '}
            <span className="muted mono small">{item.chartTemplateId}</span>
            {item.description !== undefined && (
              <span className="chart-description">{item.description}</span>
            )}
          </figcaption>
        </figure>
      ))}
      {manifest.failures.length > 0 && (
        <div className="notice notice-warning">
          <strong>Charts that could not be drawn</strong>
          <ul>
            {manifest.failures.map((f) => (
              <li key={f.chartTemplateId}>
                <span className="mono">{f.chartTemplateId}</span>: <code>{f.code}</code> {f.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

export function OhlcvView({ data }: { data: OhlcvExport }) {
  const candles = lastCandles(data, 20);
  return (
    <div>
      <p className="muted small">
        {data.candles.length} candles · {data.symbol} {data.timeframe} ·{' '}
        {formatUtc(data.range.from)} → {formatUtc(data.range.to)} · source {data.source.provider}
        {typeof data.source['dataset'] === 'string' ? ` (${data.source['dataset']})` : ''}
      </p>
      <div className="table-wrap">
        <table className="data-table">
          <caption className="visually-hidden">
            The last {candles.length} candles, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Open time (UTC)</th>
              <th scope="col" className="num">
                Open
              </th>
              <th scope="col" className="num">
                High
              </th>
              <th scope="col" className="num">
                Low
              </th>
              <th scope="col" className="num">
                Close
              </th>
              <th scope="col" className="num">
                Volume
              </th>
            </tr>
          </thead>
          <tbody>
            {candles.map((c) => (
              <tr key={c.openTime}>
                <td className="mono small">{formatUtc(c.openTime)}</td>
                <td className="num">{formatNumber(c.open)}</td>
                <td className="num">{formatNumber(c.high)}</td>
                <td className="num">{formatNumber(c.low)}</td>
                <td className={`num ${c.close >= c.open ? 'up' : 'down'}`}>
                  {formatNumber(c.close)}
                </td>
                <td className="num">{formatNumber(c.volume, true)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export function AccountView({ snapshot }: { snapshot: AccountSnapshot }) {
  const q = snapshot.quoteCurrency;
  return (
    <div>
      <div className="stat-row">
        <div className="stat">
          <span className="stat-value">
            {formatMoney(snapshot.equity)} {q}
          </span>
          <span className="stat-label">Equity</span>
        </div>
        <div className="stat">
          <span className="stat-value">
            {formatMoney(snapshot.freeCash)} {q}
          </span>
          <span className="stat-label">Free cash</span>
        </div>
        <div className="stat">
          <span className="stat-value">
            {formatFraction(snapshot.riskLimits.maxPositionFraction)}
          </span>
          <span className="stat-label">Max position</span>
        </div>
        <div className="stat">
          <span className="stat-value">
            {formatFraction(snapshot.riskLimits.maxRiskPerTradeFraction)}
          </span>
          <span className="stat-label">Max risk per trade</span>
        </div>
      </div>
      <p className="muted small">
        Account <span className="mono">{snapshot.accountId}</span> · {snapshot.source.provider} · as
        of {formatUtc(snapshot.asOf)}
      </p>
      {snapshot.positions.length === 0 ? (
        <p className="muted">No open positions.</p>
      ) : (
        <div className="table-wrap">
          <table className="data-table">
            <caption className="visually-hidden">Positions</caption>
            <thead>
              <tr>
                <th scope="col">Symbol</th>
                <th scope="col">Side</th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col" className="num">
                  Entry
                </th>
                <th scope="col" className="num">
                  Mark
                </th>
                <th scope="col" className="num">
                  Value
                </th>
                <th scope="col" className="num">
                  Unrealized P&amp;L
                </th>
                <th scope="col" className="num">
                  Of equity
                </th>
              </tr>
            </thead>
            <tbody>
              {snapshot.positions.map((p) => (
                <tr key={`${p.symbol}-${p.side}`}>
                  <td className="mono">{p.symbol}</td>
                  <td>{p.side}</td>
                  <td className="num">{formatNumber(p.size)}</td>
                  <td className="num">{formatNumber(p.averageEntry)}</td>
                  <td className="num">{formatNumber(p.markPrice)}</td>
                  <td className="num">{formatMoney(p.marketValue)}</td>
                  <td className={`num ${(p.unrealizedPnl ?? 0) >= 0 ? 'up' : 'down'}`}>
                    {formatMoney(p.unrealizedPnl)}
                    {p.unrealizedPnlPct !== undefined && ` (${p.unrealizedPnlPct.toFixed(2)}%)`}
                  </td>
                  <td className="num">{formatFraction(p.fractionOfEquity)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
