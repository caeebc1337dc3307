import type { RunDocument } from '../../api/api-types';
import { formatDuration } from '../../model/format';
import { stepTone } from '../../model/status';
import { buildTimeline, segmentBox, type TimelineRow } from '../../model/timeline';
import { StepStatusBadge } from '../../ui/status-badge';

interface RunTimelineProps {
  run: RunDocument;
  now: number;
  selectedStepId: string | undefined;
  onSelect: (stepId: string) => void;
}

function attempts(row: TimelineRow): string {
  if (row.attempt === 0) return '';
  const of = row.maxAttempts === undefined ? '' : `/${row.maxAttempts}`;
  return `attempt ${row.attempt}${of}${row.retries > 0 ? ` · retried ${row.retries}×` : ''}`;
}

function meta(row: TimelineRow): string {
  if (row.reusedFrom !== undefined) return `reused from ${row.reusedFrom}`;
  const parts = [
    row.queueMs === undefined ? undefined : `queued ${formatDuration(row.queueMs)}`,
    row.runMs === undefined ? undefined : `ran ${formatDuration(row.runMs)}`,
    attempts(row) || undefined,
  ];
  return parts.filter((p) => p !== undefined).join(' · ') || 'not started';
}

/** Per step: queue delay (ready → claimed, hatched) and run time (claimed → finished, solid). */
export function RunTimeline({ run, now, selectedStepId, onSelect }: RunTimelineProps) {
  const timeline = buildTimeline(run, now);
  return (
    <div className="timeline">
      <div className="timeline-legend" aria-hidden="true">
        <span>
          <span className="legend-swatch tl-queue" /> queued (ready → claimed)
        </span>
        <span>
          <span className="legend-swatch tl-run" /> running (claimed → finished)
        </span>
        <span className="muted">{formatDuration(timeline.endMs - timeline.startMs)} shown</span>
      </div>
      <ol className="timeline-rows" aria-label="Steps over time">
        {timeline.rows.map((row) => {
          const selected = row.stepId === selectedStepId;
          return (
            <li key={row.stepId}>
              <button
                type="button"
                className={`timeline-row${selected ? ' is-selected' : ''}`}
                aria-pressed={selected}
                aria-label={`Step ${row.stepId}: ${row.status.toLowerCase()}, ${meta(row)}`}
                onClick={() => onSelect(row.stepId)}
              >
                <span className="tl-head">
                  <StepStatusBadge status={row.status} />
                  <span className="tl-id mono" title={row.stepId}>
                    {row.stepId}
                  </span>
                </span>
                <span className="tl-track" aria-hidden="true">
                  {row.segments.map((segment) => {
                    const box = segmentBox(timeline, segment);
                    return (
                      <span
                        key={segment.kind}
                        className={`tl-bar tl-${segment.kind} tone-${stepTone(row.status)}${segment.open ? ' is-open' : ''}`}
                        style={{ left: `${box.left}%`, width: `${box.width}%` }}
                      />
                    );
                  })}
                </span>
                <span className="tl-meta muted small">{meta(row)}</span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
