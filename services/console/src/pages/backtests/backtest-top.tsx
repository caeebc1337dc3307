import { Fragment, useState } from 'react';
import type { BacktestTop, BacktestTopItem, BacktestTrade } from '../../api/backtests-api';
import {
  executionColumns,
  formatMetric,
  formatPrice,
  formatSignedPct,
  parseMarkdownTable,
  signClass,
  strategyParams,
  tradePnlPct,
  tradeReason,
} from '../../model/backtests';
import { formatUtc } from '../../model/format';
import { CopyButton } from '../../ui/copy-button';
import { Markdown } from '../run/markdown';

/** A variant's report_table_md: its pipe table drawn as a table, anything else as Markdown. */
export function ReportTable({ markdown, caption }: { markdown: string; caption: string }) {
  const table = parseMarkdownTable(markdown);
  if (table === undefined) return <Markdown>{markdown}</Markdown>;
  return (
    <div className="markdown report-md">
      <table className="report-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {table.header.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((row) => (
            <tr key={row.join('|')}>
              {row.map((cell, i) =>
                i === 0 ? (
                  <th key={i} scope="row">
                    {cell}
                  </th>
                ) : (
                  <td key={i}>{cell}</td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TradesTable({ trades, caption }: { trades: BacktestTrade[]; caption: string }) {
  if (trades.length === 0) return <p className="muted">No trades.</p>;
  return (
    <div className="table-wrap trades-wrap">
      <table className="data-table trades-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Side</th>
            <th scope="col">Entry</th>
            <th scope="col" className="num">
              Entry price
            </th>
            <th scope="col">Exit</th>
            <th scope="col" className="num">
              Exit price
            </th>
            <th scope="col" className="num">
              PnL
            </th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {trades.map((t) => (
            <tr key={`${t.entryTime}-${t.side}`}>
              <td>
                <span className={`chip side-${t.side}`}>{t.side}</span>
              </td>
              <td className="mono small">{formatUtc(t.entryTime)}</td>
              <td className="num">{formatPrice(t.entryPrice)}</td>
              <td className="mono small">{formatUtc(t.exitTime)}</td>
              <td className="num">{formatPrice(t.exitPrice)}</td>
              <td className={`num ${signClass(t.pnl)}`}>{tradePnlPct(t)}</td>
              <td>{tradeReason(t.reason)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The expanded row: full key, the report table, the trades when the result kept them. */
function VariantDetails({ item }: { item: BacktestTopItem }) {
  return (
    <div className="variant-details">
      <p className="variant-key">
        <code className="mono small">{item.variant_key}</code>{' '}
        <CopyButton text={item.variant_key} label="Copy variant key" />
      </p>
      {item.report_table_md === undefined && item.trades === undefined && (
        <p className="muted small">Its report table and trades come with the result.</p>
      )}
      <div className="variant-details-grid">
        {item.report_table_md !== undefined && (
          <section aria-label={`Report of variant ${item.rank}`}>
            <h3 className="panel-title">Report</h3>
            <ReportTable
              markdown={item.report_table_md}
              caption={`Report of variant ${item.rank}`}
            />
          </section>
        )}
        {item.trades !== undefined && (
          <section aria-label={`Trades of variant ${item.rank}`}>
            <h3 className="panel-title">Trades ({item.trades.length})</h3>
            <TradesTable trades={item.trades} caption={`Trades of variant ${item.rank}`} />
          </section>
        )}
      </div>
    </div>
  );
}

/** The metric columns of the top table, in the order MetricCells draws them. */
const METRIC_COLUMNS = [
  'Return',
  'Max DD',
  'Sharpe',
  'Win rate',
  'Profit factor',
  'Exposure',
  'Trades',
] as const;
/** Rank, params, execution, the metrics, the details toggle. */
const COLUMNS = 3 + METRIC_COLUMNS.length + 1;

/** The ranking metrics of a variant, one cell each (the order of the table's head). */
function MetricCells({ metrics: m }: { metrics: BacktestTopItem['metrics'] }) {
  return (
    <>
      <td data-label="Return" className={`num strong ${signClass(m.total_return_pct)}`}>
        {formatSignedPct(m.total_return_pct)}
      </td>
      <td data-label="Max DD" className="num">
        {formatMetric(m.max_drawdown_pct)}%
      </td>
      <td data-label="Sharpe" className="num">
        {formatMetric(m.sharpe)}
      </td>
      <td data-label="Win rate" className="num">
        {formatMetric(m.win_rate_pct, 1)}%
      </td>
      <td data-label="Profit factor" className="num">
        {formatMetric(m.profit_factor)}
      </td>
      <td data-label="Exposure" className="num">
        {formatMetric(m.exposure_pct, 1)}%
      </td>
    </>
  );
}

function TopRow({
  item,
  execution,
  open,
  onToggle,
}: {
  item: BacktestTopItem;
  /** The execution fields in which this row differs from others (none: all alike). */
  execution: string[];
  open: boolean;
  onToggle: () => void;
}) {
  const m = item.metrics;
  const detailsId = `variant-${item.rank}-details`;
  // Report tables and trades come with the result; the best-so-far has the full key only.
  const hasReport = item.report_table_md !== undefined;
  const what = hasReport ? 'report' : 'details';
  return (
    <Fragment>
      <tr className={open ? 'row-open' : undefined}>
        <td data-label="Rank" className="num rank">
          {item.rank}
        </td>
        <td data-label="Params" className="cell-variant mono small" title={item.variant_key}>
          {strategyParams(item.strategy)}
        </td>
        <td data-label="Execution" className="cell-exec">
          {execution.length === 0 ? (
            <span className="muted">—</span>
          ) : (
            execution.map((field) => (
              <span key={field} className="exec-field mono">
                {field}
              </span>
            ))
          )}
        </td>
        <MetricCells metrics={m} />
        <td data-label="Trades" className="num">
          {m.trades}
          {item.trades !== undefined && (
            <span className="chip chip-success trades-kept" title="Trades kept for this variant">
              list
            </span>
          )}
        </td>
        <td data-label="Details" className="cell-actions">
          <button
            type="button"
            className="btn btn-small btn-ghost"
            aria-expanded={open}
            aria-controls={detailsId}
            aria-label={`${open ? 'Hide' : 'Show'} ${what} of variant ${item.rank}`}
            onClick={onToggle}
          >
            {open ? 'Hide' : hasReport ? 'Report' : 'Details'}
          </button>
        </td>
      </tr>
      {open && (
        <tr id={detailsId} className="details-row">
          <td colSpan={COLUMNS}>
            <VariantDetails item={item} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** The ranked variants: best so far while running, the result (expandable reports) once done. */
export function TopTable({ top }: { top: BacktestTop }) {
  // The best variant's report opens with the result (a new table: the top query is per state).
  const [open, setOpen] = useState<ReadonlySet<number>>(
    () => new Set(top.source === 'result' ? [1] : []),
  );
  const { varying, common } = executionColumns(top.items);
  const toggle = (rank: number): void =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (!next.delete(rank)) next.add(rank);
      return next;
    });
  return (
    <>
      <div className="table-wrap">
        <table className="data-table top-table">
          <caption className="visually-hidden">Top variants by total return</caption>
          <thead>
            <tr>
              <th scope="col" className="num">
                Rank
              </th>
              <th scope="col">Params</th>
              <th scope="col">Execution</th>
              {METRIC_COLUMNS.map((name) => (
                <th key={name} scope="col" className="num">
                  {name}
                </th>
              ))}
              <th scope="col">
                <span className="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {top.items.map((item, i) => (
              <TopRow
                key={item.variant_key}
                item={item}
                execution={varying[i] ?? []}
                open={open.has(item.rank)}
                onToggle={() => toggle(item.rank)}
              />
            ))}
          </tbody>
        </table>
      </div>
      {common.length > 0 && (
        <p className="muted small top-common">
          Every variant: <span className="mono">{common.join(', ')}</span>
        </p>
      )}
    </>
  );
}
