export * from './report-index-store.port';
export * from './report-index.errors';
export * from './symbol-key';
export {
  canonicalInstant,
  isCanonicalInstant,
  RECOMMENDATION_ID_PATTERN,
  REPORT_ID_PATTERN,
  type IndexKind,
} from './index-entries';
export { MAX_FILTERED_SCAN } from './index-list';
export * from './in-memory-report-index.store';
export * from './firestore-report-index.store';
export * from './latest-reports';
