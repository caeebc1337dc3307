import type {
  BacktestJob,
  BacktestJobState,
  BacktestStage,
  BacktestTopItem,
  BacktestTrade,
} from '@tda/contracts';
import type { Tone } from './status';

/*
 * How backtest jobs (seed 003, runs of flow backtest_v1) read in the console: states, a list row,
 * one progress bar per stage, variant keys and metrics. Pure: the pages render it.
 */

export const STAGES: readonly BacktestStage[] = ['stage_a', 'stage_b', 'finalizing'];
export const JOB_STATES: readonly BacktestJobState[] = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
];

const STATE_TONES: Readonly<Record<BacktestJobState, Tone>> = {
  queued: 'idle',
  running: 'active',
  succeeded: 'success',
  failed: 'danger',
  cancelled: 'stopped',
};

const STATE_LABELS: Readonly<Record<BacktestJobState, string>> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const STAGE_LABELS: Readonly<Record<BacktestStage, string>> = {
  stage_a: 'Stage A',
  stage_b: 'Stage B',
  finalizing: 'Finalizing',
};

/** What each stage's units are (seed 003): the words under its bar. */
const STAGE_UNITS: Readonly<Record<BacktestStage, string>> = {
  stage_a: 'base variants',
  stage_b: 'expanded variants',
  finalizing: 'steps',
};

export const jobStateTone = (state: BacktestJobState): Tone => STATE_TONES[state];
export const jobStateLabel = (state: BacktestJobState): string => STATE_LABELS[state];
export const stageLabel = (stage: BacktestStage | undefined): string =>
  stage === undefined ? '—' : STAGE_LABELS[stage];

/** succeeded, failed, cancelled: nothing changes any more; stop polling. */
export const isTerminalJob = (state: BacktestJobState): boolean =>
  state === 'succeeded' || state === 'failed' || state === 'cancelled';

/** Polling of the jobs list: every 2 s while a listed job is queued or running, else none. */
export const JOBS_POLL_MS = 2_000;

export function pollWhileActive(states: readonly BacktestJobState[]): number | false {
  return states.some((s) => !isTerminalJob(s)) ? JOBS_POLL_MS : false;
}

/** Parameters whose two lists combine only ascending (fast < slow …), as libs/backtest counts. */
const ASCENDING: Readonly<Record<string, readonly [string, string]>> = {
  ma_cross: ['fast', 'slow'],
  rsi_reversion: ['lower', 'upper'],
  macd_cross: ['fast', 'slow'],
};

const numberList = (value: unknown): number[] =>
  Array.isArray(value) ? value.filter((v): v is number => typeof v === 'number') : [];

function ascendingPairs(a: number[], b: number[]): number {
  return a.reduce((n, x) => n + b.filter((y) => y > x).length, 0);
}

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/**
 * Base × execution variants of a job's effective request (stage A units × the execution
 * combinations), counted like libs/backtest countVariants; undefined when the request lacks a
 * strategy grid.
 */
export function variantCounts(
  request: Readonly<Record<string, unknown>>,
): { base: number; execution: number; total: number } | undefined {
  const strategy = asRecord(request['strategy']);
  const params = asRecord(strategy['params']);
  const kind = typeof strategy['kind'] === 'string' ? strategy['kind'] : '';
  const names = Object.keys(params);
  if (kind === '' || names.length === 0) return undefined;
  const pair = ASCENDING[kind];
  let base = 1;
  for (const name of names) {
    if (pair === undefined || !pair.includes(name)) base *= numberList(params[name]).length;
  }
  if (pair !== undefined) {
    base *= ascendingPairs(numberList(params[pair[0]]), numberList(params[pair[1]]));
  }
  let execution = 1;
  for (const values of Object.values(asRecord(request['execution']))) {
    if (Array.isArray(values) && values.length > 0) execution *= values.length;
  }
  return { base, execution, total: base * execution };
}

/** The strategy's kind (and moving average) as the request names it: "ma_cross (ema)". */
export function strategyOf(request: Readonly<Record<string, unknown>>): string {
  const strategy = asRecord(request['strategy']);
  const kind = typeof strategy['kind'] === 'string' ? strategy['kind'] : '—';
  return typeof strategy['ma'] === 'string' ? `${kind} (${strategy['ma']})` : kind;
}

/** The current stage's completion in whole percent (undefined before the first heartbeat). */
export function progressPercent(job: Pick<BacktestJob, 'state' | 'progress'>): number | undefined {
  if (job.state === 'succeeded') return 100;
  const p = job.progress;
  if (p === undefined) return undefined;
  return p.total_units === 0 ? 0 : Math.floor(Math.min(p.processed_units / p.total_units, 1) * 100);
}

/** One line of the jobs list. */
export interface JobRow {
  jobId: string;
  symbol: string;
  timeframe: string;
  strategy: string;
  state: BacktestJobState;
  stateLabel: string;
  tone: Tone;
  stage: string;
  /** The current stage's percent; undefined before any progress. */
  percent: number | undefined;
  /** "120/300" of the current stage ('' before any progress). */
  units: string;
  /** Base × execution variants ("100 × 12 = 1,200"); '—' when unknown. */
  variants: string;
  createdAt: string;
}

const COUNT = new Intl.NumberFormat('en-US');
export const formatCount = (n: number): string => COUNT.format(n);

export function jobRow(job: BacktestJob): JobRow {
  const counts = variantCounts(job.request);
  const p = job.progress;
  return {
    jobId: job.job_id,
    symbol: job.symbol,
    timeframe: job.timeframe,
    strategy: strategyOf(job.request),
    state: job.state,
    stateLabel: jobStateLabel(job.state),
    tone: jobStateTone(job.state),
    stage: job.state === 'succeeded' ? 'Done' : stageLabel(job.progress?.stage ?? job.stage),
    percent: progressPercent(job),
    units: p === undefined ? '' : `${formatCount(p.processed_units)}/${formatCount(p.total_units)}`,
    variants: counts === undefined ? '—' : formatCount(counts.total),
    createdAt: job.created_at,
  };
}

/** The newest counts seen of each stage (the job shows only its current stage's). */
export type StageMemory = Partial<Record<BacktestStage, { processed: number; total: number }>>;

const currentStage = (job: Pick<BacktestJob, 'stage' | 'progress'>): BacktestStage | undefined =>
  job.progress?.stage ?? job.stage;

/** Folds a polled job into the memory: its stage's counts; every earlier stage is complete. */
export function rememberStages(memory: StageMemory, job: BacktestJob): StageMemory {
  const next: StageMemory = { ...memory };
  const current = currentStage(job);
  const upTo = job.state === 'succeeded' ? STAGES.length : STAGES.indexOf(current ?? 'stage_a');
  for (const stage of STAGES.slice(0, Math.max(upTo, 0))) {
    const total = next[stage]?.total ?? 0;
    next[stage] = { processed: total, total };
  }
  if (job.progress !== undefined && job.state !== 'succeeded') {
    next[job.progress.stage] = {
      processed: job.progress.processed_units,
      total: job.progress.total_units,
    };
  }
  return next;
}

export type StageStatus = 'pending' | 'active' | 'done' | 'stopped' | 'skipped';

/** One stage's bar: what the page draws and what role=progressbar states. */
export interface StageBar {
  stage: BacktestStage;
  label: string;
  status: StageStatus;
  /** aria-valuenow / aria-valuemax: units when known, else 0..100. */
  now: number;
  max: number;
  percent: number;
  /** "120 / 300 expanded variants", "Done", "Waiting", "Not run". */
  text: string;
}

function stageStatus(job: BacktestJob, index: number, currentIndex: number): StageStatus {
  if (job.state === 'succeeded' || index < currentIndex) return 'done';
  if (index > currentIndex || job.state === 'queued') return 'pending';
  if (job.state === 'running') return 'active';
  return 'stopped';
}

const EMPTY_STAGE_TEXT: Readonly<Record<StageStatus, string>> = {
  pending: 'Waiting',
  active: 'Starting',
  done: 'Done',
  stopped: 'Stopped',
  skipped: 'Not run',
};

/** Three bars (stage A, stage B, finalizing) from the job and the counts seen before. */
export function stageBars(job: BacktestJob, memory: StageMemory = {}): StageBar[] {
  const known = rememberStages(memory, job);
  const currentIndex = STAGES.indexOf(currentStage(job) ?? 'stage_a');
  return STAGES.map((stage, i) => {
    let status = stageStatus(job, i, currentIndex);
    if (status === 'pending' && isTerminalJob(job.state)) status = 'skipped';
    const seen = known[stage];
    const label = STAGE_LABELS[stage];
    if (status === 'done' && (seen === undefined || seen.total === 0)) {
      return { stage, label, status, now: 100, max: 100, percent: 100, text: 'Done' };
    }
    if (seen === undefined || status === 'pending' || status === 'skipped') {
      const text = EMPTY_STAGE_TEXT[status];
      return { stage, label, status, now: 0, max: 100, percent: 0, text };
    }
    const processed = status === 'done' ? seen.total : Math.min(seen.processed, seen.total);
    const percent = seen.total === 0 ? 0 : Math.floor((processed / seen.total) * 100);
    const text = `${formatCount(processed)} / ${formatCount(seen.total)} ${STAGE_UNITS[stage]}`;
    return { stage, label, status, now: processed, max: seen.total, percent, text };
  });
}

/**
 * The execution fields that tell the rows apart (per row) and those every row shares, from the
 * variant keys (`kind:ma:fast=5,slow=50|direction=long_only,feeBps=10,…`).
 */
export function executionColumns(items: readonly Pick<BacktestTopItem, 'variant_key'>[]): {
  varying: string[][];
  common: string[];
} {
  const split = items.map((item) => {
    const exec = item.variant_key.split('|')[1] ?? '';
    return exec === '' ? [] : exec.split(',');
  });
  const name = (field: string): string => field.split('=')[0] ?? field;
  const all = new Set(split.flat());
  const varies = new Set([...all].filter((f) => !split.every((s) => s.includes(f))).map(name));
  return {
    varying: split.map((exec) => exec.filter((f) => varies.has(name(f)))),
    common: (split[0] ?? []).filter((f) => !varies.has(name(f))),
  };
}

/** A variant's strategy parameters ("fast=5, slow=50"; kind and ma are the job's). */
export function strategyParams(strategy: Readonly<Record<string, unknown>>): string {
  return Object.entries(strategy)
    .filter(([k]) => k !== 'kind' && k !== 'ma')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
}

/** A metric with two decimals ("12.34"), "—" when absent, "∞" for a profit factor of null. */
export function formatMetric(value: number | null | undefined, digits = 2): string {
  if (value === null) return '∞';
  if (value === undefined || !Number.isFinite(value)) return '—';
  return value.toFixed(digits);
}

/** A signed percentage: "+12.34%", "−3.10%". */
export function formatSignedPct(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const text = `${Math.abs(value).toFixed(2)}%`;
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : text;
}

/** 'up' / 'down' / '' for colouring a return. */
export const signClass = (value: number): string => (value > 0 ? 'up' : value < 0 ? 'down' : '');

const TRADE_REASONS: Readonly<Record<BacktestTrade['reason'], string>> = {
  signal: 'Signal',
  stop: 'Stop loss',
  take_profit: 'Take profit',
  trailing: 'Trailing stop',
  end: 'End of data',
};

export const tradeReason = (reason: BacktestTrade['reason']): string => TRADE_REASONS[reason];

const PRICE_LARGE = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});
const PRICE_SMALL = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

/** A fill price: cents from 1,000 up ("60,220.69"), six significant digits below ("0.0123457"). */
export function formatPrice(value: number): string {
  if (!Number.isFinite(value)) return '—';
  return Math.abs(value) >= 1_000 ? PRICE_LARGE.format(value) : PRICE_SMALL.format(value);
}

/** A trade's pnl (equity units, start equity 1) as a percent of the starting equity. */
export const tradePnlPct = (trade: Pick<BacktestTrade, 'pnl'>): string =>
  formatSignedPct(trade.pnl * 100);

/** A parsed Markdown pipe table (the report_table_md the worker writes). */
export interface MarkdownTable {
  header: string[];
  rows: string[][];
}

function cells(line: string): string[] {
  const trimmed = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/**
 * A GitHub-style pipe table as rows, or undefined when `md` is not one table (the console's
 * Markdown renderer has no GFM tables, so the page draws this one itself).
 */
export function parseMarkdownTable(md: string): MarkdownTable | undefined {
  const lines = md
    .trim()
    .split('\n')
    .map((l) => l.trim());
  if (lines.length < 2 || !lines.every((l) => l.startsWith('|'))) return undefined;
  const [head = '', rule = '', ...body] = lines;
  if (!/^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/.test(rule)) return undefined;
  const header = cells(head);
  const rows = body.map(cells);
  if (rows.some((r) => r.length !== header.length)) return undefined;
  return { header, rows };
}
