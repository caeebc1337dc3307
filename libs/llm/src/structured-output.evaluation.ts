import { classifyGeneration, extractCandidateText } from './candidate-text';
import type { LlmResponse, LlmUsageMetadata } from './llm-client.port';
import type { OutputSchemaValidator, OutputValidationError } from './output-schema';
import type { InvalidOutputKind } from './repair-prompt';

/**
 * A rule a schema-valid output breaks (the step's domain invariants, checked in code after the
 * schema). Built by our code from rule ids, schema paths and limits: never from the output's text,
 * because it reaches logs, the step error and the repair prompt.
 */
export interface OutputRuleViolation {
  /** Stable rule id, snake_case (e.g. buy_stop_below_entry). */
  rule: string;
  /** JSON Pointer of the offending field (schema-declared names and indices only). */
  path: string;
  /** What the rule demands, in words. */
  message: string;
}

/** The step's check of a schema-valid output: the rules it breaks ([] = acceptable). */
export type OutputCheck = (output: Record<string, unknown>) => readonly OutputRuleViolation[];

/** At most this many violations are reported (like schema validation errors). */
const MAX_REPORTED_VIOLATIONS = 10;
const RULE_ID = /^[a-z][a-z0-9_]{0,63}$/;
/** Declared names and indices, or `*` for a key the schema does not declare. */
const SAFE_PATH = /^(\/([A-Za-z0-9_]{1,64}|\*)){0,8}$/;

/** Violations as validation errors (keyword = the rule id), defensively shaped and capped. */
function violationErrors(violations: readonly OutputRuleViolation[]): OutputValidationError[] {
  return violations.slice(0, MAX_REPORTED_VIOLATIONS).map((v) => ({
    path: SAFE_PATH.test(v.path) && v.path !== '' ? v.path : '/',
    keyword: RULE_ID.test(v.rule) ? v.rule : 'invariant',
    message: v.message.slice(0, 300),
  }));
}

/** finishReason reported when the provider gives none (Gemini's enum name for "unspecified"). */
export const UNSPECIFIED_FINISH_REASON = 'FINISH_REASON_UNSPECIFIED';

export interface UsageTotals {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount: number;
}

export function emptyUsage(): UsageTotals {
  return {
    promptTokenCount: 0,
    candidatesTokenCount: 0,
    totalTokenCount: 0,
    thoughtsTokenCount: 0,
  };
}

export function addUsage(totals: UsageTotals, usage: LlmUsageMetadata | undefined): void {
  totals.promptTokenCount += usage?.promptTokenCount ?? 0;
  totals.candidatesTokenCount += usage?.candidatesTokenCount ?? 0;
  totals.totalTokenCount += usage?.totalTokenCount ?? 0;
  totals.thoughtsTokenCount += usage?.thoughtsTokenCount ?? 0;
}

/** What one answered model call produced, judged against the registry schema. */
export type Evaluation =
  | { kind: 'valid'; output: Record<string, unknown>; textBytes: number; textSha256: string }
  | {
      kind: 'blocked';
      finishReason?: string;
      blockReason?: string;
      textBytes: number;
      textSha256: string;
    }
  | {
      kind: 'invalid';
      reason: { kind: InvalidOutputKind; message: string };
      /** The rejected text: kept in memory for the repair call only, never logged or returned. */
      text: string;
      textBytes: number;
      textSha256: string;
      validationErrors: OutputValidationError[];
      validationErrorCount: number;
    };

export type InvalidEvaluation = Extract<Evaluation, { kind: 'invalid' }>;

export function finishReasonOf(response: LlmResponse): string {
  return response.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON;
}

function jsonParsePosition(error: unknown): string {
  // V8 quotes part of the input in its message; only the position is kept.
  const match = error instanceof Error ? /position (\d+)/.exec(error.message) : null;
  return match === null ? '' : ` at position ${match[1]}`;
}

/**
 * seed 002 steps 2-5 for one response: extract the candidate text, map the finish reason
 * (blocked / incomplete), parse, validate against the registry schema, then the step's own
 * `check` (domain invariants): a violated rule makes the output invalid like a schema error.
 */
export function evaluateResponse(
  response: LlmResponse,
  validator: OutputSchemaValidator,
  schemaId: string,
  check?: OutputCheck,
): Evaluation {
  const candidate = extractCandidateText(response);
  const digest = { textBytes: candidate.textBytes, textSha256: candidate.textSha256 };
  const outcome = classifyGeneration(response);
  if (outcome.kind === 'blocked') {
    return outcome.source === 'prompt'
      ? { kind: 'blocked', blockReason: outcome.blockReason, ...digest }
      : { kind: 'blocked', finishReason: outcome.finishReason, ...digest };
  }
  const invalid = (
    kind: InvalidOutputKind,
    message: string,
    errors: OutputValidationError[] = [],
    count = 0,
  ): Evaluation => ({
    kind: 'invalid',
    reason: { kind, message },
    text: candidate.text,
    ...digest,
    validationErrors: errors,
    validationErrorCount: count,
  });
  if (candidate.text === '') {
    return invalid(
      'missing_text',
      `the response has no candidate text (candidates=${response.candidates.length}, finishReason=${finishReasonOf(response)})`,
    );
  }
  if (outcome.kind === 'incomplete') {
    return invalid(
      'incomplete_output',
      `the generation did not complete (finishReason=${outcome.finishReason})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(candidate.text);
  } catch (error) {
    return invalid('json_parse', `the candidate text is not valid JSON${jsonParsePosition(error)}`);
  }
  const result = validator.validate(parsed);
  if (!result.ok) {
    const first = result.errors[0];
    return invalid(
      'schema_validation',
      `the output does not match schema ${schemaId}: ${result.errorCount} error(s)${
        first === undefined ? '' : `, first at ${first.path} (${first.keyword})`
      }`,
      result.errors,
      result.errorCount,
    );
  }
  const violations = check?.(result.value) ?? [];
  if (violations.length > 0) {
    const errors = violationErrors(violations);
    const rules = [...new Set(errors.map((e) => e.keyword))];
    return invalid(
      'invariant_violation',
      `the output breaks ${violations.length} rule(s): ${rules.join(', ')}`,
      errors,
      violations.length,
    );
  }
  return { kind: 'valid', output: result.value, ...digest };
}

/** What an invalid answer's error and logs may say about it (never its text). */
export function invalidDetails(
  evaluation: InvalidEvaluation,
  finishReason: string,
): Record<string, unknown> {
  return {
    reasonKind: evaluation.reason.kind,
    reasonMessage: evaluation.reason.message,
    finishReason,
    textBytes: evaluation.textBytes,
    textSha256: evaluation.textSha256,
    validationErrorCount: evaluation.validationErrorCount,
    validationErrors: evaluation.validationErrors,
  };
}

/** Safety ratings reduced to category/probability/blocked strings. */
export function safeRatings(response: LlmResponse): unknown[] | undefined {
  const ratings = response.candidates[0]?.safetyRatings;
  if (ratings === undefined) return undefined;
  return ratings.slice(0, 10).map((rating) => {
    const r = (rating ?? {}) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of ['category', 'probability', 'severity']) {
      if (typeof r[key] === 'string') out[key] = r[key];
    }
    if (typeof r['blocked'] === 'boolean') out['blocked'] = r['blocked'];
    return out;
  });
}
