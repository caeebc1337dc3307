import type { BacktestJobState } from '../../api/backtests-api';
import { jobStateLabel, jobStateTone, type StageBar } from '../../model/backtests';

/* Small pieces the jobs list and the job page share. */

export const backtestPath = (jobId: string): string => `/backtests/${encodeURIComponent(jobId)}`;

export function JobStateBadge({ state }: { state: BacktestJobState }) {
  return (
    <span className={`badge tone-${jobStateTone(state)}`}>
      <span className="badge-dot" aria-hidden="true" />
      {jobStateLabel(state)}
    </span>
  );
}

/** The current stage's bar in a list row (decorative: the percent is written next to it). */
export function MiniProgress({ percent, title }: { percent: number | undefined; title: string }) {
  if (percent === undefined) return <span className="muted">—</span>;
  return (
    <span className="progress" title={title}>
      <span className="progress-track" aria-hidden="true">
        <span className="progress-fill" style={{ width: `${percent}%` }} />
      </span>
      <span className="progress-text">{percent}%</span>
    </span>
  );
}

const STATUS_TONES: Readonly<Record<StageBar['status'], string>> = {
  pending: 'idle',
  active: 'active',
  done: 'success',
  stopped: 'stopped',
  skipped: 'skipped',
};

/** One bar per stage, each a labelled role=progressbar (units when known, else percent). */
export function StageProgress({ bars }: { bars: StageBar[] }) {
  return (
    <ol className="stage-bars" aria-label="Progress per stage">
      {bars.map((bar) => (
        <li key={bar.stage} className={`stage-bar stage-${bar.status}`}>
          <div className="stage-bar-head">
            <span className="stage-bar-label">{bar.label}</span>
            <span className="stage-bar-text">{bar.text}</span>
            <span className="stage-bar-pct">{bar.percent}%</span>
          </div>
          <div
            className={`stage-track tone-${STATUS_TONES[bar.status]}`}
            role="progressbar"
            aria-label={`${bar.label} progress`}
            aria-valuemin={0}
            aria-valuemax={bar.max}
            aria-valuenow={bar.now}
            aria-valuetext={`${bar.text} (${bar.percent}%)`}
          >
            <span className="stage-fill" style={{ width: `${bar.percent}%` }} />
          </div>
        </li>
      ))}
    </ol>
  );
}
