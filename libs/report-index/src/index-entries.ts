import {
  RECOMMENDATION_ID_PATTERN,
  REPORT_ID_PATTERN,
  validate,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
  type ValidationIssue,
  type ValidationResult,
} from '@tda/contracts';
import { InvalidIndexEntryError } from './report-index.errors';

/**
 * Entry rules shared by every adapter, so that the in-memory index accepts, rejects and returns
 * exactly what Firestore does.
 */

export type IndexKind = 'report' | 'recommendation';

/** contracts/common.schema.json ReportId / RecommendationId. */
export { RECOMMENDATION_ID_PATTERN, REPORT_ID_PATTERN };

export const ID_PATTERNS: Readonly<Record<IndexKind, RegExp>> = {
  report: REPORT_ID_PATTERN,
  recommendation: RECOMMENDATION_ID_PATTERN,
};

/** An instant exactly as Date#toISOString writes it: the form whose string order is time order. */
export function isCanonicalInstant(value: string): boolean {
  const time = Date.parse(value);
  return Number.isFinite(time) && new Date(time).toISOString() === value;
}

/** Any RFC 3339 instant as Date#toISOString writes it (UTC, milliseconds). */
export function canonicalInstant(value: string): string {
  return new Date(Date.parse(value)).toISOString();
}

/** The fields every entry is ordered by. */
export interface OrderedEntry {
  asOf: string;
  createdAt: string;
}

function orderIssues(entry: OrderedEntry): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of ['asOf', 'createdAt'] as const) {
    if (!isCanonicalInstant(entry[field])) {
      issues.push({
        path: `/${field}`,
        keyword: 'canonical',
        message: 'must be an instant as Date#toISOString writes it (UTC, milliseconds)',
      });
    }
  }
  return issues;
}

/**
 * A JSON copy of `entry` (undefined properties dropped, as Firestore's ignoreUndefinedProperties
 * would), checked against its contract and the canonical-instant rule; what `create` stores.
 */
function prepare<T extends OrderedEntry>(
  kind: IndexKind,
  entry: T,
  id: (entry: T) => string,
  check: (data: unknown) => ValidationResult<T>,
): T {
  const copy: unknown = JSON.parse(JSON.stringify(entry));
  const checked = check(copy);
  if (!checked.ok) throw new InvalidIndexEntryError(kind, safeId(entry, id), checked.issues);
  const issues = orderIssues(checked.value);
  if (issues.length > 0) throw new InvalidIndexEntryError(kind, id(checked.value), issues);
  return checked.value;
}

function safeId<T>(entry: T, id: (entry: T) => string): string | undefined {
  try {
    const value = id(entry);
    return typeof value === 'string' ? value.slice(0, 60) : undefined;
  } catch {
    return undefined;
  }
}

export function prepareReportEntry(entry: ReportIndexEntry): ReportIndexEntry {
  return prepare('report', entry, (e) => e.reportId, validate.reportIndex);
}

export function prepareRecommendationEntry(
  entry: RecommendationIndexEntry,
): RecommendationIndexEntry {
  return prepare('recommendation', entry, (e) => e.recoId, validate.recommendationIndex);
}

/** A stored document as an entry; a document that breaks the contract is an error, not a skip. */
export function readReportEntry(id: string, data: unknown): ReportIndexEntry {
  const checked = validate.reportIndex(data);
  if (!checked.ok) throw new InvalidIndexEntryError('report', id, checked.issues);
  return checked.value;
}

export function readRecommendationEntry(id: string, data: unknown): RecommendationIndexEntry {
  const checked = validate.recommendationIndex(data);
  if (!checked.ok) throw new InvalidIndexEntryError('recommendation', id, checked.issues);
  return checked.value;
}
