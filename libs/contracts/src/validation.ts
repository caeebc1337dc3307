import type { ErrorCode } from './generated/types';
import { TdaError } from './tda-error';

/** One validation problem, with a JSON Pointer to the offending value. */
export interface ValidationIssue {
  path: string;
  message: string;
  keyword: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** The subset of an ajv error object that the issue formatter reads. */
export interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  propertyName?: string;
  schemaPath?: string;
}

/** The shape of an ajv standalone validator. */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

/** How many issues a report carries at most: enough to fix a document, never a wall of text. */
const MAX_ISSUES = 20;
/** Offending values are quoted in messages only this long: ids and codes, never whole texts. */
const MAX_QUOTED_VALUE = 80;

const NO_VALUE = Symbol('no value');

/** Resolves a JSON Pointer (RFC 6901) in `data`; NO_VALUE when it does not exist. */
function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let current: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return NO_VALUE;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return NO_VALUE;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
  return text.length > MAX_QUOTED_VALUE ? `${text.slice(0, MAX_QUOTED_VALUE - 3)}...` : text;
}

/** "'BTC.USDT' " for scalar offending values, '' otherwise (objects are never echoed). */
function offending(data: unknown, pointer: string): string {
  const value = valueAt(data, pointer);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return `${quote(value)} `;
  }
  return '';
}

function lastSegment(pointer: string): string {
  return (pointer.split('/').pop() ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
}

function describe(error: AjvError, all: readonly AjvError[], data: unknown): ValidationIssue {
  const path = error.instancePath === '' ? '/' : error.instancePath;
  const issue = (message: string): ValidationIssue => ({ path, keyword: error.keyword, message });
  switch (error.keyword) {
    case 'required':
      return issue(`missing required field '${String(error.params['missingProperty'])}'`);
    case 'enum':
      return issue(
        `${offending(data, error.instancePath)}must be one of ${JSON.stringify(error.params['allowedValues'])}`,
      );
    case 'const':
      return issue(
        `${offending(data, error.instancePath)}must be ${JSON.stringify(error.params['allowedValue'])}`,
      );
    case 'pattern':
      return issue(
        `${offending(data, error.instancePath)}does not match the required pattern ${String(error.params['pattern'])}`,
      );
    case 'additionalProperties':
      return issue(`unknown field '${String(error.params['additionalProperty'])}'`);
    case 'false schema':
      // a `false` subschema: the field is forbidden where it is (e.g. mutually exclusive fields)
      return issue(`field '${lastSegment(error.instancePath)}' is not allowed in this combination`);
    case 'contains': {
      // ajv reports which values were expected only on the per-item const attempts
      const expected = all
        .filter(
          (e) =>
            e.keyword === 'const' &&
            error.schemaPath !== undefined &&
            e.schemaPath?.startsWith(`${error.schemaPath}/`) === true,
        )
        .map((e) => JSON.stringify(e.params['allowedValue']));
      const wanted = [...new Set(expected)];
      return issue(
        wanted.length > 0
          ? `must contain ${wanted.join(' and ')}`
          : (error.message ?? 'must contain a matching item'),
      );
    }
    default:
      return issue(error.message ?? error.keyword);
  }
}

/** Errors that only restate or decompose another error of the same report. */
function isNoise(error: AjvError, all: readonly AjvError[]): boolean {
  // "must match "then" schema": the then-branch's own errors say what is wrong
  if (error.keyword === 'if') return true;
  // per-item attempts of a failed `contains` (summarised on the contains error itself)
  return all.some(
    (other) =>
      other !== error &&
      other.keyword === 'contains' &&
      other.schemaPath !== undefined &&
      error.schemaPath?.startsWith(`${other.schemaPath}/`) === true,
  );
}

/**
 * Turns ajv's raw errors into short, deduplicated issues. A propertyNames failure is reported
 * once, on the offending key (ajv also reports the nested pattern failure of the same key).
 * With `data` (the validated document), messages quote the offending scalar value.
 */
export function toIssues(
  errors: readonly AjvError[] | null | undefined,
  data?: unknown,
): ValidationIssue[] {
  const all = errors ?? [];
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  const push = (issue: ValidationIssue): void => {
    const key = `${issue.path}|${issue.message}`;
    if (seen.has(key) || issues.length >= MAX_ISSUES) return;
    seen.add(key);
    issues.push(issue);
  };
  const badKeys = new Set(
    all
      .filter((e) => e.keyword === 'propertyNames')
      .map((e) => `${e.instancePath}|${String(e.params['propertyName'])}`),
  );
  for (const error of all) {
    // ajv reports the key's own failure under the same instancePath with propertyName set
    if (
      error.propertyName !== undefined &&
      badKeys.has(`${error.instancePath}|${error.propertyName}`)
    ) {
      if (error.keyword !== 'propertyNames') {
        push({
          path: error.instancePath === '' ? '/' : error.instancePath,
          keyword: 'propertyNames',
          message: `invalid key '${error.propertyName}': ${error.message ?? error.keyword}`,
        });
      }
      continue;
    }
    if (error.keyword === 'propertyNames') {
      // a propertyNames error without the nested detail (not produced by ajv today, but cheap)
      const key = String(error.params['propertyName']);
      const detailed = all.some(
        (e) => e !== error && e.instancePath === error.instancePath && e.propertyName === key,
      );
      if (!detailed) {
        push({
          path: error.instancePath === '' ? '/' : error.instancePath,
          keyword: 'propertyNames',
          message: `invalid key '${key}'`,
        });
      }
      continue;
    }
    if (isNoise(error, all)) continue;
    push(describe(error, all, data));
  }
  return issues;
}

export function runValidator<T>(validator: CompiledValidator, data: unknown): ValidationResult<T> {
  if (validator(data)) return { ok: true, value: data as T };
  return { ok: false, issues: toIssues(validator.errors, data) };
}

/**
 * A TdaError for data that violates a contract: built from a failed ValidationResult's issues,
 * it keeps the contract name and the issues, names the first five in its message and details,
 * and carries `code` (default INVALID_REQUEST).
 */
export class ContractViolationError extends TdaError {
  constructor(
    readonly contract: string,
    readonly issues: ValidationIssue[],
    code: ErrorCode = 'INVALID_REQUEST',
  ) {
    super(
      code,
      `${contract} is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { details: { contract, issues: issues.slice(0, 5) } },
    );
  }
}
