import { type FlowRun, RUN_ID_PATTERN, type ValidationIssue, validate } from '@tda/contracts';
import { FIELD_DELETE, type RunPatch, deepFreeze, isFieldDelete } from '@tda/flow-engine';
import { InvalidRunDocumentError, InvalidRunPatchError } from './flow-store.errors';

/**
 * Document rules shared by every adapter, so that the in-memory store accepts, rejects and
 * returns exactly what Firestore does.
 */

/**
 * Only ids that satisfy the RunId contract can name a stored run. Checked before any lookup, so an
 * id such as 'a/b' or '..' (from a URL, say) is simply not found instead of being interpreted as a
 * Firestore path by one backend and as a key by another.
 */
export function isRunId(runId: string): boolean {
  return RUN_ID_PATTERN.test(runId);
}

/** Firestore reserves field names of the form __name__. */
const RESERVED_FIELD = /^__.*__$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function jsonIssue(path: string, message: string): ValidationIssue {
  return { path, keyword: 'json', message };
}

/**
 * Deep-copies `value` as storable JSON: undefined object properties are dropped (Firestore's
 * ignoreUndefinedProperties), -0 becomes 0 (Firestore stores it as the integer 0), and anything
 * Firestore would store differently or reject is reported: non-finite numbers, Dates and other
 * class instances (Firestore would turn a Date into a Timestamp), arrays directly inside arrays,
 * empty or reserved map keys, symbols (a FIELD_DELETE below the top level of a patch), functions.
 */
function toStoredJson(
  value: unknown,
  trail: string[],
  insideArray: boolean,
  issues: ValidationIssue[],
): unknown {
  // The path of an issue is joined from `trail` only when there is one: this runs on every
  // value of every write (issue 16).
  const here = (): string => trail.join('/');
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) issues.push(jsonIssue(here(), 'number must be finite'));
    return Object.is(value, -0) ? 0 : value;
  }
  if (Array.isArray(value)) {
    if (insideArray) issues.push(jsonIssue(here(), 'an array may not directly contain an array'));
    return value.map((item: unknown, index) => {
      trail.push(String(index));
      if (item === undefined) issues.push(jsonIssue(here(), 'undefined array item'));
      const stored = toStoredJson(item, trail, true, issues);
      trail.pop();
      return stored;
    });
  }
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const key in value) {
      const child = value[key];
      if (child === undefined || !Object.hasOwn(value, key)) continue;
      if (key === '') issues.push(jsonIssue(here(), 'empty field name'));
      else if (RESERVED_FIELD.test(key))
        issues.push(jsonIssue(here(), `reserved field name '${key}'`));
      trail.push(key);
      copy[key] = toStoredJson(child, trail, false, issues);
      trail.pop();
    }
    return copy;
  }
  issues.push(jsonIssue(here() || '/', `not a JSON value (${describeType(value)})`));
  return undefined;
}

function describeType(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value;
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  return typeof ctor === 'function' && ctor.name !== '' ? ctor.name : 'object';
}

/**
 * What `create` stores: a JSON copy of `run` with `updatedAt` stamped, validated strictly against
 * flow_run.schema.json.
 */
export function prepareNewRun(run: FlowRun, now: Date): FlowRun {
  const issues: ValidationIssue[] = [];
  const stored = toStoredJson({ ...run, updatedAt: now.toISOString() }, [''], false, issues);
  const runId = typeof run.runId === 'string' ? run.runId : undefined;
  if (issues.length > 0) throw new InvalidRunDocumentError(runId, issues);
  const result = validate.flowRun(stored);
  if (!result.ok) throw new InvalidRunDocumentError(runId, result.issues);
  return result.value;
}

/**
 * The contracts library reports at most this many issues (libs/contracts/src/validation.ts). A
 * list that long may be truncated, so it cannot prove that only unknown fields were wrong.
 */
const CONTRACT_ISSUE_CAP = 20;

/** Issues inside one step's inputs: that step's worker refuses them (INVALID_STEP_INPUTS). */
const STEP_INPUTS_PATH = /^\/steps\/[^/]+\/inputs(\/|$)/;

/**
 * Lenient read (seed 002 validation policy): unknown extra fields are tolerated, including inside
 * objects the schema closes (ErrorInfo), and kept as they are; so are problems inside a step's
 * inputs, which fail that step in its worker (INVALID_STEP_INPUTS) instead of making the whole
 * run unreadable. Every other violation (a missing required field, a bad status, ...) rejects
 * the document. Truncated issue lists fail closed. The run is returned frozen: what a store hands
 * out is a read-only snapshot in every adapter.
 */
export function readRunDocument(runId: string, data: unknown): FlowRun {
  return readRunDocumentStrictly(runId, data).run;
}

/** readRunDocument, telling whether the document met the contract strictly (nothing tolerated). */
export function readRunDocumentStrictly(
  runId: string,
  data: unknown,
): { run: FlowRun; strict: boolean } {
  const result = validate.flowRun(data);
  if (result.ok) return { run: deepFreeze(result.value), strict: true };
  const real = result.issues.filter(
    (issue) => issue.keyword !== 'additionalProperties' && !STEP_INPUTS_PATH.test(issue.path),
  );
  if (real.length === 0 && result.issues.length < CONTRACT_ISSUE_CAP) {
    return { run: deepFreeze(data as FlowRun), strict: false };
  }
  throw new InvalidRunDocumentError(runId, real.length > 0 ? real : result.issues);
}

/**
 * Whether `next` — a strictly valid run with `patch` applied — is strictly valid, judged by
 * validating only what the patch touched: the run's own fields and the steps the patch wrote,
 * as a run of just those steps. Sound because flow_run.schema.json relates no step to another
 * or to the run's fields (a test holds the schema to that), so the steps the patch left alone
 * are still valid. `false` when that cannot be told this way (a step deleted, the step map
 * replaced) or when the patched parts are not valid: the caller then validates in full.
 * Issue 16: a full validation per written version was a tenth of an embedded step's CPU.
 */
export function patchedRunIsValid(next: FlowRun, patch: StoredPatch): boolean {
  const touched: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(patch)) {
    if (!path.startsWith('steps.')) {
      if (path === 'steps') return false;
      continue;
    }
    const dot = path.indexOf('.', 6);
    const stepId = dot === -1 ? path.slice(6) : path.slice(6, dot);
    const step = next.steps[stepId];
    if (step === undefined || (dot === -1 && isFieldDelete(value))) return false;
    touched[stepId] = step;
  }
  if (Object.keys(touched).length === 0) {
    const first = Object.keys(next.steps)[0];
    if (first === undefined) return false;
    touched[first] = next.steps[first];
  }
  return validate.flowRun({ ...next, steps: touched }).ok;
}

/** A validated patch: every value is storable JSON or FIELD_DELETE, `updatedAt` is stamped. */
export type StoredPatch = Readonly<Record<string, unknown>>;

/**
 * Validates a patch and stamps `updatedAt`. Paths are Firestore field paths split on '.'; every
 * segment must be non-empty and not reserved, and no path may be a prefix of another (Firestore
 * rejects that, while applyPatch would silently let the later one win). Undefined values are
 * dropped, like undefined document properties.
 */
export function prepareRunPatch(runId: string, patch: RunPatch, now: Date): StoredPatch {
  const issues: ValidationIssue[] = [];
  const stamped: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(patch)) {
    if (value === undefined || path === 'updatedAt') continue;
    stamped[path] = isFieldDelete(value)
      ? FIELD_DELETE
      : toStoredJson(value, [path], false, issues);
  }
  stamped['updatedAt'] = now.toISOString();

  for (const path in stamped) checkPatchPath(path, stamped, issues);
  if (issues.length > 0) throw new InvalidRunPatchError(runId, issues);
  return stamped;
}

/**
 * One path of a patch: no empty or reserved segment, and no proper prefix (cut at a '.') that is
 * itself a path of the patch. Walks the path once (issue 16: this runs on every write).
 */
function checkPatchPath(
  path: string,
  patch: Readonly<Record<string, unknown>>,
  issues: ValidationIssue[],
): void {
  let empty = false;
  let reserved: string | undefined;
  const conflicts: string[] = [];
  for (let start = 0; start <= path.length;) {
    const dot = path.indexOf('.', start);
    const end = dot === -1 ? path.length : dot;
    const segment = path.slice(start, end);
    if (segment === '') empty = true;
    else if (reserved === undefined && RESERVED_FIELD.test(segment)) reserved = segment;
    if (dot === -1) break;
    const parent = path.slice(0, dot);
    if (Object.hasOwn(patch, parent)) conflicts.push(parent);
    start = dot + 1;
  }
  if (empty) issues.push(patchIssue(path, 'empty path segment'));
  if (reserved !== undefined) issues.push(patchIssue(path, `reserved field name '${reserved}'`));
  for (const parent of conflicts) issues.push(patchIssue(path, `conflicts with path '${parent}'`));
}

function patchIssue(path: string, message: string): ValidationIssue {
  return { path, keyword: 'patch', message };
}
