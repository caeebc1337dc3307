import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun } from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
import { logEvent, type Logger } from '@tda/observability';
import type { IndexKind } from '@tda/report-index';
import { LOGGER, RUN_STORE } from '../orchestrator.tokens';
import { listRunPages } from '../runs/run-pages';
import { indexIdOf, indexKindOf } from './index-entry.builder';
import { IndexWriter, type IndexStepOutcome } from './index-writer.service';

/** Run pages (100 runs each) one backfill reads at most; the answer says `truncated`. */
export const BACKFILL_MAX_PAGES = 100;
/** Items listed in one answer at most (the counts are always complete). */
export const BACKFILL_MAX_ITEMS = 500;

export interface IndexBackfillItem {
  runId: string;
  stepId: string;
  kind: 'report' | 'recommendation';
  id: string;
  outcome: 'created' | 'would_create' | 'unreadable';
  reason?: string;
}

export interface IndexBackfillReport {
  dryRun: boolean;
  scannedRuns: number;
  /** More runs than BACKFILL_MAX_PAGES pages exist: the oldest were not looked at. */
  truncated: boolean;
  counts: { created: number; wouldCreate: number; alreadyIndexed: number; unreadable: number };
  /** What was (or would be) created and what could not be read; entries already there are only counted. */
  items: IndexBackfillItem[];
  itemsTruncated: boolean;
}

function parseBackfillBody(body: unknown): { apply: boolean } {
  if (body === undefined || body === null) return { apply: false };
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('body must be an object {apply?: boolean}', { field: 'body' });
  }
  const unknown = Object.keys(body).filter((key) => key !== 'apply');
  if (unknown.length > 0) {
    throw new InvalidRequestError(`unknown body fields: ${unknown.join(', ')}`, {
      unknownFields: unknown,
      allowed: ['apply'],
    });
  }
  const { apply } = body as { apply?: unknown };
  if (apply !== undefined && typeof apply !== 'boolean') {
    throw new InvalidRequestError('apply must be a boolean', { field: 'apply' });
  }
  return { apply: apply === true };
}

/** The SUCCEEDED LLM steps of a run that record an artifact: the ones the index covers. */
function indexableSteps(run: FlowRun): Array<{ stepId: string; kind: IndexKind }> {
  const steps: Array<{ stepId: string; kind: IndexKind }> = [];
  for (const [stepId, step] of Object.entries(run.steps)) {
    const kind = indexKindOf(step.stepType);
    if (kind === undefined || step.status !== 'SUCCEEDED' || step.outputs.gcs_uri === undefined) {
      continue;
    }
    steps.push({ stepId, kind });
  }
  return steps.sort((a, b) => (a.stepId < b.stepId ? -1 : 1));
}

/**
 * POST /admin/index/backfill: the index entries of reports and recommendations that exist only
 * as artifacts (runs from before the index, an event acked after its last delivery attempt, an
 * index outage that outlasted the redeliveries). Scans the runs (newest first, every owner and
 * status) for SUCCEEDED LLM_REPORT / LLM_RECOMMENDATION steps with an artifact and hands each to
 * the same IndexWriter the step events use. A dry run (the default) reads and builds but writes
 * nothing; `{apply: true}` creates the missing entries. Safe to repeat: create-only, and an entry
 * already there is only counted.
 */
@Injectable()
export class IndexBackfill {
  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'list'>,
    private readonly writer: IndexWriter,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async backfill(body: unknown): Promise<IndexBackfillReport> {
    const { apply } = parseBackfillBody(body);
    const { runs, truncated } = await listRunPages(this.store, {}, BACKFILL_MAX_PAGES);
    const report: IndexBackfillReport = {
      dryRun: !apply,
      scannedRuns: runs.length,
      truncated,
      counts: { created: 0, wouldCreate: 0, alreadyIndexed: 0, unreadable: 0 },
      items: [],
      itemsTruncated: false,
    };
    // A rerun's reused step names its producer's entry: one look per entry and pass.
    const seen = new Set<string>();
    for (const run of runs) {
      for (const { stepId, kind } of indexableSteps(run)) {
        const id = indexIdOf(kind, run, stepId);
        if (seen.has(id)) continue;
        seen.add(id);
        record(report, await this.writer.indexStep(run, stepId, { dryRun: !apply }));
      }
    }
    logEvent(this.logger, 'info', 'index_backfill_finished', {
      dryRun: report.dryRun,
      scannedRuns: report.scannedRuns,
      truncated,
      ...report.counts,
    });
    return report;
  }
}

function record(report: IndexBackfillReport, outcome: IndexStepOutcome): void {
  if (outcome.outcome === 'not_indexable') return;
  const { counts } = report;
  if (outcome.outcome === 'exists') {
    counts.alreadyIndexed += 1;
    return;
  }
  if (outcome.outcome === 'created') counts.created += 1;
  else if (outcome.outcome === 'would_create') counts.wouldCreate += 1;
  else counts.unreadable += 1;
  if (report.items.length >= BACKFILL_MAX_ITEMS) {
    report.itemsTruncated = true;
    return;
  }
  const { runId, stepId, kind, id, reason } = outcome;
  report.items.push({
    runId,
    stepId,
    kind,
    id,
    outcome: outcome.outcome,
    ...(reason === undefined ? {} : { reason }),
  });
}
