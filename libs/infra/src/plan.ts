/**
 * One line of `tda infra apply`'s plan. Every resource kind (Pub/Sub, IAM, Firestore, Scheduler,
 * ...) reports in this shape so the CLI prints one table and "apply twice changes nothing" is
 * one check: every item `unchanged`.
 */
export interface InfraPlanItem {
  /** `skip`: cannot be applied yet or here (e.g. a Cloud Run service not deployed yet). */
  action: 'create' | 'update' | 'unchanged' | 'skip';
  /** e.g. `topic`, `subscription`, `service-account`, `iam-binding`, `firestore-index`. */
  kind: string;
  /** Resource name as a user would search for it in the console. */
  name: string;
  /** Field-level differences of an update (`field: from → to`), or why an item is skipped. */
  changes: { field: string; from: unknown; to: unknown }[];
  note?: string;
}

export interface ApplyOptions {
  /** Read and compare only: no create, update or IAM change. */
  dryRun: boolean;
}

export function changed(plan: readonly InfraPlanItem[]): InfraPlanItem[] {
  return plan.filter((item) => item.action === 'create' || item.action === 'update');
}
