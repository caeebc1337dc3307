import type { FlowRun, RunStatus } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';

/**
 * A run together with the version it was read at. The version is opaque: callers only hand it
 * back to `update` as the optimistic precondition. (Firestore: the document update time with
 * nanoseconds; in memory: a counter.)
 */
export interface VersionedRun {
  run: FlowRun;
  version: string;
}

export const LIST_LIMIT_MAX = 100;
export const DEFAULT_FLOW_RUNS_COLLECTION = 'flow_runs';

export interface RunListQuery {
  /** Page size, 1..LIST_LIMIT_MAX. */
  limit: number;
  /** `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
  status?: RunStatus;
  flowKey?: string;
  ownerId?: string;
  idempotencyKey?: string;
  /** scope.symbol exactly as triggered (BTC-USDT and BTC/USDT are different values). */
  symbol?: string;
}

/** Which runs to count: one status, optionally one owner's. */
export interface RunCountQuery {
  status: RunStatus;
  ownerId?: string;
}

export interface RunListPage {
  /** Ordered by createdAt desc, then runId desc. */
  runs: FlowRun[];
  /** null when this is the last page. */
  nextCursor: string | null;
}

/**
 * Persistence of flow runs (DESIGN.md §2-§3). Every adapter has the same semantics, proven by
 * the conformance suite in `@tda/flow-store/testing`:
 *
 * - `create` is create-only: an existing runId → RunAlreadyExistsError. The document is
 *   validated against flow_run.schema.json first (InvalidRunDocumentError, nothing written).
 * - `get` validates leniently: unknown extra fields are tolerated (seed 002 validation policy),
 *   anything else that breaks the schema (a missing required field, ...) → InvalidRunDocumentError.
 * - `update` applies a RunPatch (dotted paths, FIELD_DELETE; see @tda/flow-engine applyPatch) only
 *   if the document is still at `expectedVersion`; otherwise VersionConflictError and nothing is
 *   written. A missing run → RunNotFoundError. It returns the new version and the run as written.
 * - Every write stamps `updatedAt` from the store's clock (a patch's own `updatedAt` is
 *   overwritten).
 * - Values are plain JSON (no Dates, no nested arrays, no NaN; undefined properties are dropped),
 *   so that what is read back is what was written on every backend.
 * - `list` is keyset-paginated (createdAt desc, runId desc) with an opaque cursor; a malformed
 *   cursor → InvalidCursorError. Runs created after the first page was fetched with a newer
 *   createdAt never show up on later pages, and nothing that existed before is skipped or repeated.
 * - `count` counts the runs with a status (of one owner) without reading them: admission and the
 *   active-runs quota ask it on every trigger and run end (Firestore bills a count query one read
 *   per 1,000 matching index entries, a list one read per document).
 *
 * Why the port speaks in patches rather than documents: a patch names exactly the fields a writer
 * decided to change, so two writers touching different steps of one run do not overwrite each
 * other, and the storage layout stays the adapter's business. DESIGN.md §8 anticipates moving the
 * step map to a subcollection (`flow_runs/{runId}/steps/{stepId}`) once a flow needs more parallel
 * step writes than one document sustains. That change stays behind this port: an adapter would
 * route `steps.<stepId>.*` paths of a patch to the step document (and the rest to the run
 * document), assemble `run.steps` from both on `get`, and derive the version from both update
 * times (e.g. a run-level write counter bumped in the same batch/transaction), while the engine
 * keeps producing the same patches against the same FlowRun shape.
 */
export interface FlowRunStore {
  create(run: FlowRun): Promise<VersionedRun>;
  get(runId: string): Promise<VersionedRun | null>;
  update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun>;
  list(query: RunListQuery): Promise<RunListPage>;
  count(query: RunCountQuery): Promise<number>;
}
