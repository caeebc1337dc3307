import { FAULT_KINDS, FAULT_LABELS, type FaultKind } from './chaos-plan';

/** One fault kind in the printed report. */
export interface FaultRow {
  kind: FaultKind;
  /** Runs whose plan has this fault. */
  runs: number;
  /** What was actually done (e.g. "3 killed", "41 copies, 17 held back"). */
  injected: string;
  /** How those runs ended, e.g. "SUCCEEDED 3/3". */
  outcome: string;
}

/** One required property: what it must be and what this suite run observed. */
export interface CheckRow {
  check: string;
  required: string;
  observed: string;
  ok: boolean;
}

/** One driven run: its faults, how it ended and how long it took. */
export interface RunRow {
  index: number;
  faults: string;
  expected: string;
  status: string;
  seconds: string;
}

export interface ChaosReport {
  seed: number;
  durationMs: number;
  faults: FaultRow[];
  checks: CheckRow[];
  runs: RunRow[];
  /** Notable log events and how often they occurred (e.g. message_handler_failed = nacks). */
  events: Record<string, number>;
}

export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const escape = (cell: string): string => cell.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const line = (cells: readonly string[]): string => `| ${cells.map(escape).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The report `npm test` prints: the faults injected, then the checks with their verdicts. */
export function renderChaosReport(report: ChaosReport): string {
  const order = new Map(FAULT_KINDS.map((kind, index) => [kind, index]));
  const faults = [...report.faults].sort(
    (a, b) => (order.get(a.kind) ?? 0) - (order.get(b.kind) ?? 0),
  );
  return [
    `chaos suite: seed ${report.seed}, ${(report.durationMs / 1000).toFixed(1)} s`,
    '',
    markdownTable(
      ['fault', 'runs', 'injected', 'outcome'],
      faults.map((f) => [FAULT_LABELS[f.kind], String(f.runs), f.injected, f.outcome]),
    ),
    '',
    markdownTable(
      ['run', 'faults', 'expected', 'status', 'seconds'],
      report.runs.map((r) => [String(r.index), r.faults, r.expected, r.status, r.seconds]),
    ),
    '',
    markdownTable(
      ['check', 'required', 'observed', 'result'],
      report.checks.map((c) => [c.check, c.required, c.observed, c.ok ? 'ok' : 'FAILED']),
    ),
    '',
    `log events: ${
      Object.entries(report.events)
        .map(([event, n]) => `${event} ${n}`)
        .join(', ') || '-'
    }`,
    '',
  ].join('\n');
}
