import type { FlowScheduleRequest, RunScope, RunSignal, ScheduleFire } from '@tda/contracts';
import type { ScopeForm } from './scope-form';
import type { Tone } from './status';

/*
 * The schedule form and how schedules, their fires and a run's signal decision read. Pure: the
 * pages render it.
 */

export type CatchUp = NonNullable<FlowScheduleRequest['catchUp']>;
export type Overlap = NonNullable<FlowScheduleRequest['overlap']>;

/** The schedule's own fields (the scope comes from the flow's scope form). */
export interface ScheduleFields {
  cron: string;
  timeZone: string;
  catchUp: CatchUp;
  overlap: Overlap;
  /** '' = no signals. */
  minSignal: string;
  paused: boolean;
  description: string;
}

export const CRON_EXAMPLES: readonly { cron: string; label: string }[] = [
  { cron: '*/15 * * * *', label: 'every 15 minutes' },
  { cron: '0 * * * *', label: 'every hour' },
  { cron: '0 8 * * *', label: 'every day at 08:00' },
  { cron: '0 8 * * 1-5', label: 'weekdays at 08:00' },
  { cron: '0 0 * * 1', label: 'Mondays at midnight' },
];

export function initialScheduleFields(): ScheduleFields {
  return {
    cron: '0 8 * * *',
    timeZone: 'UTC',
    catchUp: 'skip',
    overlap: 'skip',
    minSignal: '',
    paused: false,
    description: '',
  };
}

/** The request schema's shape (5 fields of cron characters); the server checks the values. */
const CRON_SHAPE = /^[ \t]*[0-9A-Za-z*,/-]+([ \t]+[0-9A-Za-z*,/-]+){4}[ \t]*$/;

/** An IANA name the runtime knows (the orchestrator resolves it the same way). */
export function isTimeZone(name: string): boolean {
  if (name.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Problems by field name (cron, timeZone, minSignal, description); empty when it can be sent. */
export function validateScheduleFields(fields: ScheduleFields): Record<string, string> {
  const problems: Record<string, string> = {};
  if (!CRON_SHAPE.test(fields.cron) || fields.cron.length > 100) {
    problems['cron'] = 'Five fields: minute hour day-of-month month day-of-week, e.g. 0 8 * * 1-5';
  }
  if (!isTimeZone(fields.timeZone.trim())) {
    problems['timeZone'] = 'An IANA time zone such as UTC, Europe/London or America/New_York';
  }
  const min = Number(fields.minSignal);
  if (fields.minSignal.trim() !== '' && !(Number.isFinite(min) && min >= 0 && min <= 1)) {
    problems['minSignal'] = 'A number from 0 to 1 (or empty: no signals)';
  }
  if (fields.description.length > 200) problems['description'] = 'At most 200 characters';
  return problems;
}

/** The scope form of a flow for a schedule: every field but asOf (a run's asOf is its slot). */
export function scheduleScopeForm(form: ScopeForm): ScopeForm {
  return { fields: form.fields.filter((f) => f.name !== 'asOf') };
}

/** The POST /schedules body of a valid form; defaults (UTC, skip, skip, enabled) left out. */
export function toScheduleRequest(
  flowKey: string,
  scope: Record<string, unknown>,
  fields: ScheduleFields,
): FlowScheduleRequest {
  const request: FlowScheduleRequest = {
    flowKey,
    scope: scope as RunScope,
    cron: fields.cron
      .trim()
      .split(/[ \t]+/)
      .join(' '),
  };
  const timeZone = fields.timeZone.trim();
  if (timeZone !== 'UTC') request.timeZone = timeZone;
  if (fields.catchUp !== 'skip') request.catchUp = fields.catchUp;
  if (fields.overlap !== 'skip') request.overlap = fields.overlap;
  if (fields.minSignal.trim() !== '') request.minSignalStrength = Number(fields.minSignal);
  if (fields.paused) request.enabled = false;
  if (fields.description.trim() !== '') request.description = fields.description.trim();
  return request;
}

/** When a schedule fires next: none while paused. */
export function nextFireOf(schedule: {
  enabled: boolean;
  nextFireTimes?: string[];
  nextSlotAt?: string;
}): string | undefined {
  if (!schedule.enabled) return undefined;
  return schedule.nextFireTimes?.[0] ?? schedule.nextSlotAt;
}

/** "Mon, 21 Sep 2026, 08:00" in `timeZone` (the wall time the cron is read in). */
export function formatInZone(iso: string, timeZone: string): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at) || !isTimeZone(timeZone)) return iso;
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: '2-digit',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
}

const FIRE_LABELS: Readonly<Record<ScheduleFire['outcome'], [string, Tone]>> = {
  fired: ['Fired', 'success'],
  skipped_overlap: ['Skipped: previous run still active', 'stopped'],
  skipped_missed: ['Skipped: missed', 'skipped'],
  failed: ['Failed to trigger', 'danger'],
};

/** The latest slot decision in words and colour. */
export function fireOutcome(fire: ScheduleFire): { label: string; tone: Tone } {
  const [label, tone] = FIRE_LABELS[fire.outcome];
  return { label, tone };
}

/** A signal strength or threshold as the API and the CLI state it: 0..1, two decimals. */
export const formatStrength = (value: number | undefined): string =>
  value === undefined ? '—' : value.toFixed(2);

/** run.signal.reason (flow-engine SignalNoneReason) in words. */
const NO_SIGNAL_REASONS: Readonly<Record<string, string>> = {
  no_threshold: 'the schedule sets no minimum signal strength',
  no_recommendation: 'the run has no recommendation',
  not_scheduled: 'the run is not one of a schedule’s slots (or the schedule was deleted)',
  run_not_succeeded: 'the run did not succeed',
};

/**
 * A scheduled run's signal decision: emitted (strength reached the threshold), filtered (below
 * it) or none (nothing to filter), with strength vs threshold.
 */
export function signalDecision(signal: RunSignal): { label: string; detail: string; tone: Tone } {
  const versus = `strength ${formatStrength(signal.signal_strength)} ${signal.status === 'emitted' ? '≥' : '<'} ${formatStrength(signal.minSignalStrength)}`;
  switch (signal.status) {
    case 'emitted':
      return { label: 'Signal emitted', detail: versus, tone: 'success' };
    case 'filtered':
      return { label: 'Signal filtered', detail: versus, tone: 'skipped' };
    case 'none':
      return {
        label: 'No signal',
        detail: NO_SIGNAL_REASONS[signal.reason ?? ''] ?? signal.reason ?? 'nothing to filter',
        tone: 'idle',
      };
  }
}
