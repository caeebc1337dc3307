import { Inject, Injectable } from '@nestjs/common';
import {
  ArtifactNotFoundError,
  ArtifactStoreError,
  parseGcsUri,
  type ArtifactStore,
} from '@tda/artifacts';
import {
  validate,
  type FlowRun,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
  type ValidationResult,
} from '@tda/contracts';
import { stepOf } from '@tda/flow-engine';
import { logEvent, type Logger } from '@tda/observability';
import { InvalidIndexEntryError, type IndexKind, type ReportIndexStore } from '@tda/report-index';
import type { OrchestratorConfig } from '../config';
import { ARTIFACT_STORE, LOGGER, ORCHESTRATOR_CONFIG, REPORT_INDEX } from '../orchestrator.tokens';
import {
  buildRecommendationIndexEntry,
  buildReportIndexEntry,
  indexIdOf,
  indexKindOf,
  producerOf,
} from './index-entry.builder';

/** What indexing one step did (or, in a dry run, would do). */
export type IndexStepOutcome =
  | { outcome: 'not_indexable'; runId: string; stepId: string; reason: string }
  | {
      outcome: 'created' | 'exists' | 'would_create' | 'unreadable';
      kind: IndexKind;
      id: string;
      runId: string;
      stepId: string;
      /** unreadable: missing | invalid_uri | foreign_bucket | not_json | invalid_artifact | other_step | invalid_entry | <storage code> */
      reason?: string;
    };

export interface IndexStepOptions {
  /** Read and build, write nothing: 'would_create' instead of 'created'. */
  dryRun?: boolean;
}

type Built =
  | { kind: 'report'; entry: ReportIndexEntry }
  | { kind: 'recommendation'; entry: RecommendationIndexEntry };

/** An artifact that can never become an entry: skipped (logged), never retried. */
interface Unreadable {
  kind: 'unreadable';
  reason: string;
  details?: Record<string, unknown>;
}

const unreadable = (reason: string, details?: Record<string, unknown>): Unreadable => ({
  kind: 'unreadable',
  reason,
  ...(details === undefined ? {} : { details }),
});

/**
 * Writes the reports/{reportId} and recommendations/{recoId} entries of finished LLM steps.
 *
 * Why the orchestrator, and only it (DESIGN §3): the index is derived from finished steps, and
 * the orchestrator is the one component that learns of every finish (the step event) and already
 * owns everything derived from the run document. Workers only write their own step; they name the
 * entry (outputs.reportId) but never write it.
 *
 * Why replay and redelivery write nothing new: the id is deterministic per producing
 * (runId, stepId) (reportIdFor / recommendationIdFor, shared with the worker), the entry is built
 * from the run and the artifact alone (no clock), and the write is create-only. A duplicated
 * event, a Pub/Sub seek or the backfill finds the entry and answers 'exists'; a lost race of two
 * deliveries is decided by Firestore's create precondition, not by a read.
 *
 * Failures: storage or index outages throw (retryable; the step-event handler nacks and the
 * redelivery tries again). An artifact that cannot become an entry (missing, not the contract,
 * another step's) is logged as index_entry_skipped and skipped: a retry would read the same bytes.
 */
@Injectable()
export class IndexWriter {
  constructor(
    @Inject(REPORT_INDEX) private readonly index: ReportIndexStore,
    @Inject(ARTIFACT_STORE) private readonly artifacts: Pick<ArtifactStore, 'read'>,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_ARTIFACTS_BUCKET'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Indexes step `stepId` of `run` if it is a SUCCEEDED LLM_REPORT / LLM_RECOMMENDATION step. */
  async indexStep(
    run: FlowRun,
    stepId: string,
    options: IndexStepOptions = {},
  ): Promise<IndexStepOutcome> {
    const step = stepOf(run, stepId);
    const kind = step === undefined ? undefined : indexKindOf(step.stepType);
    const uri = step?.outputs.gcs_uri;
    const skip = (reason: string): IndexStepOutcome => ({
      outcome: 'not_indexable',
      runId: run.runId,
      stepId,
      reason,
    });
    if (step === undefined || kind === undefined) return skip('not an indexed step type');
    if (step.status !== 'SUCCEEDED') return skip(`step is ${step.status}`);
    if (uri === undefined) return skip('no artifact');

    const id = indexIdOf(kind, run, stepId);
    const base = { kind, id, runId: run.runId, stepId };
    if (await this.alreadyIndexed(kind, id)) {
      this.log('debug', 'index_entry_exists', base);
      return { ...base, outcome: 'exists' };
    }
    const built = await this.build(kind, run, stepId, uri);
    if (built.kind === 'unreadable') {
      this.log(options.dryRun === true ? 'debug' : 'warn', 'index_entry_skipped', {
        ...base,
        uri,
        reason: built.reason,
        ...built.details,
      });
      return { ...base, outcome: 'unreadable', reason: built.reason };
    }
    if (options.dryRun === true) {
      const valid =
        built.kind === 'report'
          ? validate.reportIndex(built.entry).ok
          : validate.recommendationIndex(built.entry).ok;
      return {
        ...base,
        outcome: valid ? 'would_create' : 'unreadable',
        ...(valid ? {} : { reason: 'invalid_entry' }),
      };
    }
    return this.write(built, base);
  }

  private async write(
    built: Built,
    base: { kind: IndexKind; id: string; runId: string; stepId: string },
  ): Promise<IndexStepOutcome> {
    let outcome: 'created' | 'exists';
    try {
      outcome =
        built.kind === 'report'
          ? await this.index.createReport(built.entry)
          : await this.index.createRecommendation(built.entry);
    } catch (error) {
      if (!(error instanceof InvalidIndexEntryError)) throw error;
      // Our builder made an entry its contract refuses: a bug no redelivery fixes.
      this.log('error', 'index_entry_skipped', {
        ...base,
        reason: 'invalid_entry',
        issues: error.issues.slice(0, 5).map((i) => `${i.path || '/'} (${i.keyword})`),
      });
      return { ...base, outcome: 'unreadable', reason: 'invalid_entry' };
    }
    this.log(
      outcome === 'created' ? 'info' : 'debug',
      outcome === 'created' ? 'index_entry_created' : 'index_entry_exists',
      base,
    );
    return { ...base, outcome };
  }

  /**
   * Whether the entry exists (saves reading the artifact again on a redelivery). A stored entry
   * that breaks its contract counts as existing: create-only would not replace it either.
   */
  private async alreadyIndexed(kind: IndexKind, id: string): Promise<boolean> {
    try {
      const found =
        kind === 'report' ? await this.index.getReport(id) : await this.index.getRecommendation(id);
      return found !== null;
    } catch (error) {
      if (error instanceof InvalidIndexEntryError) return true;
      throw error;
    }
  }

  private async build(
    kind: IndexKind,
    run: FlowRun,
    stepId: string,
    uri: string,
  ): Promise<Built | Unreadable> {
    const read = await this.readJson(uri);
    if (read.kind === 'unreadable') return read;
    const { data } = read;
    const producer = producerOf(run, stepId);
    if (kind === 'report') {
      const valid = checked(validate.llmReportFile(data));
      if (valid.kind === 'unreadable') return valid;
      const { file } = valid;
      return (
        otherStep(file.metadata, producer) ?? {
          kind,
          entry: buildReportIndexEntry(run, stepId, { uri, file }),
        }
      );
    }
    const valid = checked(validate.llmRecommendationFile(data));
    if (valid.kind === 'unreadable') return valid;
    const { file } = valid;
    return (
      otherStep(file.metadata, producer) ?? {
        kind,
        entry: buildRecommendationIndexEntry(run, stepId, { uri, file }),
      }
    );
  }

  /** The artifact as JSON, from this deployment's bucket only (like GET .../artifact). */
  private async readJson(uri: string): Promise<{ kind: 'json'; data: unknown } | Unreadable> {
    let bucket: string;
    try {
      bucket = parseGcsUri(uri).bucket;
    } catch {
      return unreadable('invalid_uri');
    }
    if (bucket !== this.config.TDA_ARTIFACTS_BUCKET) return unreadable('foreign_bucket');
    let bytes: Buffer;
    try {
      bytes = await this.artifacts.read(uri);
    } catch (error) {
      if (error instanceof ArtifactNotFoundError) return unreadable('missing');
      // A storage failure a retry cannot fix (a refused name, ...) is final; others throw.
      if (error instanceof ArtifactStoreError && !error.retryable) return unreadable(error.code);
      throw error;
    }
    try {
      return { kind: 'json', data: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      return unreadable('not_json', { bytes: bytes.length });
    }
  }

  private log(
    level: 'debug' | 'info' | 'warn' | 'error',
    event: 'index_entry_created' | 'index_entry_exists' | 'index_entry_skipped',
    fields: Record<string, unknown>,
  ): void {
    logEvent(this.logger, level, event, fields);
  }
}

function checked<T>(result: ValidationResult<T>): { kind: 'file'; file: T } | Unreadable {
  if (result.ok) return { kind: 'file', file: result.value };
  // Schema paths only: the artifact holds model output, which never reaches the logs.
  return unreadable('invalid_artifact', {
    issues: result.issues.slice(0, 5).map((i) => i.path || '/'),
  });
}

/** A file of another run or step than the step's producer: not this step's report. */
function otherStep(
  metadata: { runId: string; stepId: string },
  producer: { runId: string; stepId: string },
): Unreadable | undefined {
  if (metadata.runId === producer.runId && metadata.stepId === producer.stepId) return undefined;
  return unreadable('other_step', { fileRunId: metadata.runId, fileStepId: metadata.stepId });
}
