import type { ErrorCode } from './generated/types';

/** One validation problem, with a JSON Pointer to the offending value. */
export interface ValidationIssue {
  path: string;
  message: string;
  keyword: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  propertyName?: string;
}

/** The shape of an ajv standalone validator. */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

/** How many issues a report carries at most: enough to fix a document, never a wall of text. */
const MAX_ISSUES = 20;

function describe(error: AjvError): ValidationIssue {
  const path = error.instancePath === '' ? '/' : error.instancePath;
  switch (error.keyword) {
    case 'required':
      return {
        path,
        keyword: error.keyword,
        message: `missing required field '${String(error.params['missingProperty'])}'`,
      };
    case 'enum':
      return {
        path,
        keyword: error.keyword,
        message: `must be one of ${JSON.stringify(error.params['allowedValues'])}`,
      };
    case 'pattern':
      return {
        path,
        keyword: error.keyword,
        message: `does not match the required pattern ${String(error.params['pattern'])}`,
      };
    case 'propertyNames':
      return {
        path,
        keyword: error.keyword,
        message: `invalid key '${String(error.params['propertyName'])}'`,
      };
    case 'additionalProperties':
      return {
        path,
        keyword: error.keyword,
        message: `unknown field '${String(error.params['additionalProperty'])}'`,
      };
    default:
      return { path, keyword: error.keyword, message: error.message ?? error.keyword };
  }
}

/**
 * Turns ajv's raw errors into short, deduplicated issues. A propertyNames failure is reported
 * once, on the offending key (ajv also reports the nested pattern failure of the same key).
 */
export function toIssues(errors: readonly AjvError[] | null | undefined): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  const badKeys = new Set(
    (errors ?? [])
      .filter((e) => e.keyword === 'propertyNames')
      .map((e) => `${e.instancePath}|${String(e.params['propertyName'])}`),
  );
  for (const error of errors ?? []) {
    // ajv reports the key's own pattern failure under the same instancePath with propertyName
    if (
      error.propertyName !== undefined &&
      badKeys.has(`${error.instancePath}|${error.propertyName}`)
    ) {
      if (error.keyword !== 'propertyNames') {
        const issue: ValidationIssue = {
          path: error.instancePath === '' ? '/' : error.instancePath,
          keyword: 'propertyNames',
          message: `invalid key '${error.propertyName}': ${error.message ?? error.keyword}`,
        };
        const key = `${issue.path}|${issue.message}`;
        if (!seen.has(key)) {
          seen.add(key);
          issues.push(issue);
        }
      }
      continue;
    }
    if (error.keyword === 'propertyNames') continue;
    const issue = describe(error);
    const key = `${issue.path}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
    if (issues.length >= MAX_ISSUES) break;
  }
  return issues;
}

export function runValidator<T>(validator: CompiledValidator, data: unknown): ValidationResult<T> {
  if (validator(data)) return { ok: true, value: data as T };
  return { ok: false, issues: toIssues(validator.errors) };
}

/** Thrown by the assert* helpers; carries the contract name, the issues and an error code. */
export class ContractViolationError extends Error {
  constructor(
    readonly contract: string,
    readonly issues: ValidationIssue[],
    readonly code: ErrorCode = 'INVALID_REQUEST',
  ) {
    super(
      `${contract} is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
    );
    this.name = 'ContractViolationError';
  }
}
