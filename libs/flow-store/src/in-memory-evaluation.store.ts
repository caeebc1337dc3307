import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RecommendationEvaluation } from '@tda/contracts';
import { EVALUATION_ID_PATTERN } from '@tda/flow-engine';
import {
  assertWritableEvaluation,
  changedEvaluation,
  EvaluationNotFoundError,
  EvaluationVersionConflictError,
  readEvaluationDocument,
} from './evaluation-documents';
import type {
  EvaluationChanges,
  EvaluationListPage,
  EvaluationListQuery,
  EvaluationStore,
  VersionedEvaluation,
} from './evaluation-store.port';
import { compareKeysetDesc, keysetPage, validateKeysetQuery } from './keyset-cursor';

interface Entry {
  doc: RecommendationEvaluation;
  version: string;
}

/**
 * EvaluationStore in process memory with the Firestore adapter's semantics (create-only,
 * conditional updates on an opaque counter version, lenient reads, the same list order and
 * cursor). Copies in and out; every method yields to the event loop first.
 */
export class InMemoryEvaluationStore implements EvaluationStore {
  private readonly docs = new Map<string, Entry>();
  private readonly clock: () => Date;
  private sequence = 0;

  constructor(options: { clock?: () => Date } = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  async createOnce(evaluation: RecommendationEvaluation): Promise<'created' | 'exists'> {
    const doc = assertWritableEvaluation(evaluation);
    await nextTurn();
    if (this.docs.has(doc.evaluationId)) return 'exists';
    this.docs.set(doc.evaluationId, { doc: structuredClone(doc), version: this.nextVersion() });
    return 'created';
  }

  async get(evaluationId: string): Promise<VersionedEvaluation | null> {
    await nextTurn();
    const entry = EVALUATION_ID_PATTERN.test(evaluationId)
      ? this.docs.get(evaluationId)
      : undefined;
    if (entry === undefined) return null;
    const evaluation = readEvaluationDocument(evaluationId, structuredClone(entry.doc));
    return { evaluation, version: entry.version };
  }

  async update(
    evaluationId: string,
    changes: EvaluationChanges,
    expectedVersion: string,
  ): Promise<VersionedEvaluation> {
    await nextTurn();
    const entry = this.docs.get(evaluationId);
    if (entry === undefined) throw new EvaluationNotFoundError(evaluationId);
    if (entry.version !== expectedVersion) {
      throw new EvaluationVersionConflictError(evaluationId, expectedVersion);
    }
    const stored = readEvaluationDocument(evaluationId, structuredClone(entry.doc));
    const next = changedEvaluation(stored, changes, this.clock());
    const version = this.nextVersion();
    this.docs.set(evaluationId, { doc: structuredClone(next), version });
    return { evaluation: next, version };
  }

  async list(query: EvaluationListQuery): Promise<EvaluationListPage> {
    const { ownerId, limit, after } = validateKeysetQuery(query, EVALUATION_ID_PATTERN);
    await nextTurn();
    const rows = [...this.docs.entries()]
      .filter(([, entry]) => entry.doc.ownerId === ownerId)
      .map(([id, entry]) => readEvaluationDocument(id, structuredClone(entry.doc)))
      .filter((e) => after === null || compareKeysetDesc(positionOf(e), after) > 0)
      .sort((a, b) => compareKeysetDesc(positionOf(a), positionOf(b)))
      .slice(0, limit + 1);
    const page = keysetPage(rows, limit, positionOf);
    return { evaluations: page.items, nextCursor: page.nextCursor };
  }

  private nextVersion(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}

function positionOf(e: RecommendationEvaluation): { createdAt: string; id: string } {
  return { createdAt: e.createdAt, id: e.evaluationId };
}
