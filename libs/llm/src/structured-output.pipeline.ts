import { ERROR_CODE_INFO, type ErrorCode } from '@tda/contracts';
import { type Logger, logEvent } from '@tda/observability';
import { classifyGeneration, extractCandidateText } from './candidate-text';
import {
  LlmCallError,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type LlmUsageMetadata,
} from './llm-client.port';
import type {
  JsonSchemaObject,
  OutputSchemaValidator,
  OutputValidationError,
} from './output-schema';
import {
  buildRepairPrompt,
  DEFAULT_MAX_PREVIOUS_TEXT_BYTES,
  type InvalidOutputKind,
} from './repair-prompt';
import type { TimeBudget } from './time-budget';

/**
 * seed 002 structured-output pipeline, the same for every provider: call the model (provider
 * errors retried with backoff while the budget allows), extract the candidate text, map the
 * finish reason, parse, validate against the registry schema, and at most one repair call.
 * Nothing of the prompt, the context or the model output is logged or returned: only lengths,
 * sha256, schema-side validation errors and provider metadata.
 */

export interface StructuredOutputSchema {
  schemaId: string;
  jsonSchema: JsonSchemaObject;
  validator: OutputSchemaValidator;
}

/** The pipeline's schema from a validated profile (validateLlmProfile / resolveLlmProfile). */
export function outputSchemaOf(config: {
  schemaId: string;
  generationConfig: { responseJsonSchema: JsonSchemaObject };
  validator: OutputSchemaValidator;
}): StructuredOutputSchema {
  return {
    schemaId: config.schemaId,
    jsonSchema: config.generationConfig.responseJsonSchema,
    validator: config.validator,
  };
}

export interface StructuredOutputPolicy {
  /** Provider tries per model attempt (seed 004: 3). */
  maxTries: number;
  /** First backoff delay; doubles per retry (1 s, 2 s, 4 s). */
  baseDelayMs: number;
  /**
   * The repair call starts only when at least this much time is left above the finalize
   * reserve ("safely above", seed 002).
   */
  minRepairWindowMs: number;
  /** Send the rejected candidate text back in the repair call (in memory only). */
  includePreviousText: boolean;
  maxPreviousTextBytes: number;
}

export const DEFAULT_STRUCTURED_OUTPUT_POLICY: StructuredOutputPolicy = {
  maxTries: 3,
  baseDelayMs: 1_000,
  minRepairWindowMs: 60_000,
  includePreviousText: true,
  maxPreviousTextBytes: DEFAULT_MAX_PREVIOUS_TEXT_BYTES,
};

export type LlmRequestTemplate = Omit<LlmRequest, 'attempt' | 'deadlineMs'>;

export interface RunStructuredOutputOptions {
  client: LlmClient;
  /** The first request; attempt and deadlineMs are set per call from the budget. */
  request: LlmRequestTemplate;
  schema: StructuredOutputSchema;
  budget: TimeBudget;
  /** Backoff sleep; resolves early (any value) when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  logger?: Logger;
  policy?: Partial<StructuredOutputPolicy>;
}

export interface UsageTotals {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount: number;
}

/** Safe per-attempt facts (no text). */
export interface AttemptDiagnostics {
  attempt: number;
  /** Provider calls of this attempt (retries included). */
  calls: number;
  finishReason?: string;
  textBytes?: number;
  textSha256?: string;
  reasonKind?: InvalidOutputKind | 'safety_block' | 'provider_error' | 'time_budget';
  validationErrors?: OutputValidationError[];
  validationErrorCount?: number;
}

export interface StructuredOutputSuccess {
  ok: true;
  /** The parsed output, valid against the registry schema. */
  output: Record<string, unknown>;
  /** The accepted response. */
  response: LlmResponse;
  /** Model attempts: 1, or 2 when the repair call produced the output. */
  attempts: number;
  /** Provider calls including retries. */
  calls: number;
  finishReason: string;
  modelVersion?: string;
  requestId?: string;
  /** Usage of the accepted response as reported. */
  usageMetadata?: LlmUsageMetadata;
  /** Usage summed over every response received (both attempts). */
  usageTotals: UsageTotals;
  repair: { attempted: boolean; reasonKind?: InvalidOutputKind };
  diagnostics: { textBytes: number; textSha256: string; attempts: AttemptDiagnostics[] };
}

export interface StructuredOutputFailure {
  ok: false;
  /** ErrorInfo-shaped, sanitized. */
  error: { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> };
  attempts: number;
  calls: number;
  /** Of the last response received (none when no call got an answer). */
  finishReason?: string;
  modelVersion?: string;
  requestId?: string;
  usageMetadata?: LlmUsageMetadata;
  usageTotals: UsageTotals;
  repair: { attempted: boolean; reasonKind?: InvalidOutputKind; skippedReason?: string };
  diagnostics: { attempts: AttemptDiagnostics[] };
}

export type StructuredOutputResult = StructuredOutputSuccess | StructuredOutputFailure;

/** finishReason reported when the provider gives none (Gemini's enum name for "unspecified"). */
export const UNSPECIFIED_FINISH_REASON = 'FINISH_REASON_UNSPECIFIED';

type CallOutcome =
  | { ok: true; response: LlmResponse; calls: number }
  | {
      ok: false;
      code: ErrorCode;
      message: string;
      retryable: boolean;
      details: Record<string, unknown>;
      calls: number;
      kind: 'provider_error' | 'time_budget';
    };

type Evaluation =
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
      text: string;
      textBytes: number;
      textSha256: string;
      validationErrors: OutputValidationError[];
      validationErrorCount: number;
    };

function jsonParsePosition(error: unknown): string {
  // V8 quotes part of the input in its message; only the position is kept.
  const match = error instanceof Error ? /position (\d+)/.exec(error.message) : null;
  return match === null ? '' : ` at position ${match[1]}`;
}

function evaluate(
  response: LlmResponse,
  validator: OutputSchemaValidator,
  schemaId: string,
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
  const finishReason = response.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON;
  if (candidate.text === '') {
    return invalid(
      'missing_text',
      `the response has no candidate text (candidates=${response.candidates.length}, finishReason=${finishReason})`,
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
  return { kind: 'valid', output: result.value, ...digest };
}

function addUsage(totals: UsageTotals, usage: LlmUsageMetadata | undefined): void {
  totals.promptTokenCount += usage?.promptTokenCount ?? 0;
  totals.candidatesTokenCount += usage?.candidatesTokenCount ?? 0;
  totals.totalTokenCount += usage?.totalTokenCount ?? 0;
  totals.thoughtsTokenCount += usage?.thoughtsTokenCount ?? 0;
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** Safety ratings reduced to category/probability/blocked strings. */
function safeRatings(response: LlmResponse): unknown[] | undefined {
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

/**
 * Runs the pipeline. Never throws for provider or output problems: the result says ok or
 * carries an ErrorInfo-shaped error. Error codes: LLM_SAFETY_BLOCK (finishReason SAFETY & co.
 * or a prompt blockReason; no repair), INVALID_STRUCTURED_OUTPUT (invalid after the repair, or
 * when the repair is not allowed/affordable), LLM_UNAVAILABLE / LLM_TIMEOUT / LLM_PROFILE_INVALID
 * (provider errors, after retries for the retryable ones), LLM_TIMEOUT with details.reason
 * 'finalize_budget_guardrail' when a call would start inside the finalize reserve, CANCELLED
 * when the request's signal aborted, INTERNAL_ERROR for a client that throws something other
 * than LlmCallError.
 */
export async function runStructuredOutput(
  options: RunStructuredOutputOptions,
): Promise<StructuredOutputResult> {
  const { client, schema, budget, logger } = options;
  const policy: StructuredOutputPolicy = { ...DEFAULT_STRUCTURED_OUTPUT_POLICY, ...options.policy };
  const signal = options.request.signal;
  const usageTotals: UsageTotals = {
    promptTokenCount: 0,
    candidatesTokenCount: 0,
    totalTokenCount: 0,
    thoughtsTokenCount: 0,
  };
  const diagnostics: AttemptDiagnostics[] = [];
  let calls = 0;
  let last: LlmResponse | undefined;

  type ResponseMeta = Pick<
    StructuredOutputFailure,
    'finishReason' | 'modelVersion' | 'requestId' | 'usageMetadata'
  >;
  const meta = (): ResponseMeta => {
    const out: ResponseMeta = {};
    if (last === undefined) return out;
    out.finishReason = last.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON;
    if (last.modelVersion !== undefined) out.modelVersion = last.modelVersion;
    if (last.responseId !== undefined) out.requestId = last.responseId;
    if (last.usageMetadata !== undefined) out.usageMetadata = last.usageMetadata;
    return out;
  };

  const failure = (
    code: ErrorCode,
    message: string,
    details: Record<string, unknown>,
    attempts: number,
    repair: StructuredOutputFailure['repair'],
    retryable: boolean = ERROR_CODE_INFO[code].retryable,
  ): StructuredOutputFailure => ({
    ok: false,
    error: { code, message, retryable, details: { schemaId: schema.schemaId, ...details } },
    attempts,
    calls,
    ...meta(),
    usageTotals,
    repair,
    diagnostics: { attempts: diagnostics },
  });

  /** One model attempt: provider calls with retries, guarded by the budget. */
  const call = async (request: LlmRequestTemplate, attempt: number): Promise<CallOutcome> => {
    let attemptCalls = 0;
    for (let attemptTry = 1; ; attemptTry += 1) {
      if (signal?.aborted === true) {
        return {
          ok: false,
          code: 'CANCELLED',
          message: 'the model request was cancelled before it started',
          retryable: false,
          details: { attempt },
          calls: attemptCalls,
          kind: 'provider_error',
        };
      }
      if (!budget.canStartCall()) {
        return {
          ok: false,
          code: 'LLM_TIMEOUT',
          message: `not starting model attempt ${attempt}: ${seconds(budget.remainingMs())} s left, below the ${seconds(budget.finalizeBudgetMs)} s finalize budget`,
          retryable: ERROR_CODE_INFO.LLM_TIMEOUT.retryable,
          details: {
            reason: 'finalize_budget_guardrail',
            attempt,
            remainingMs: budget.remainingMs(),
            finalizeBudgetMs: budget.finalizeBudgetMs,
          },
          calls: attemptCalls,
          kind: 'time_budget',
        };
      }
      attemptCalls += 1;
      calls += 1;
      try {
        const response = await client.generate({
          ...request,
          attempt,
          deadlineMs: budget.requestDeadlineMs(),
        });
        return { ok: true, response, calls: attemptCalls };
      } catch (error) {
        if (!(error instanceof LlmCallError)) {
          return {
            ok: false,
            code: 'INTERNAL_ERROR',
            // the message of an unknown error may quote the request: only its class is kept
            message: `the LLM client failed unexpectedly (${error instanceof Error ? error.name : typeof error})`,
            retryable: false,
            details: { attempt, tries: attemptTry },
            calls: attemptCalls,
            kind: 'provider_error',
          };
        }
        const details = { ...error.details, attempt, tries: attemptTry };
        const base = {
          ok: false as const,
          code: error.code,
          message: error.message.slice(0, 500),
          retryable: error.retryable,
          calls: attemptCalls,
          kind: 'provider_error' as const,
        };
        if (!error.retryable) return { ...base, details };
        if (attemptTry >= policy.maxTries)
          return { ...base, details: { ...details, retriesExhausted: true } };
        const delay = policy.baseDelayMs * 2 ** (attemptTry - 1);
        if (budget.remainingMs() - delay < budget.finalizeBudgetMs) {
          return { ...base, details: { ...details, retryStoppedBy: 'time_budget' } };
        }
        await options.sleep(delay, signal);
      }
    }
  };

  const logInvalid = (
    attempt: number,
    evaluation: Extract<Evaluation, { kind: 'invalid' }>,
    repairPlanned: boolean,
    finishReason: string,
  ): void => {
    if (logger === undefined) return;
    logEvent(logger, 'warn', 'structured_output_invalid', {
      attempt,
      reason: evaluation.reason,
      llm: { finishReason, schemaId: schema.schemaId, schemaSha256: schema.validator.schemaSha256 },
      diagnostics: {
        textBytes: evaluation.textBytes,
        textSha256: evaluation.textSha256,
        validationErrorCount: evaluation.validationErrorCount,
        validationErrors: evaluation.validationErrors,
      },
      policy: {
        finalizeBudgetSeconds: seconds(budget.finalizeBudgetMs),
        remainingSeconds: seconds(budget.remainingMs()),
        repairPlanned,
      },
    });
  };

  const success = (
    response: LlmResponse,
    evaluation: Extract<Evaluation, { kind: 'valid' }>,
    attempts: number,
    repair: StructuredOutputSuccess['repair'],
  ): StructuredOutputSuccess => {
    const result: StructuredOutputSuccess = {
      ok: true,
      output: evaluation.output,
      response,
      attempts,
      calls,
      finishReason: response.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON,
      usageTotals,
      repair,
      diagnostics: {
        textBytes: evaluation.textBytes,
        textSha256: evaluation.textSha256,
        attempts: diagnostics,
      },
    };
    if (response.modelVersion !== undefined) result.modelVersion = response.modelVersion;
    if (response.responseId !== undefined) result.requestId = response.responseId;
    if (response.usageMetadata !== undefined) result.usageMetadata = response.usageMetadata;
    return result;
  };

  const blockedFailure = (
    evaluation: Extract<Evaluation, { kind: 'blocked' }>,
    attempts: number,
    repair: StructuredOutputFailure['repair'],
  ): StructuredOutputFailure => {
    const details: Record<string, unknown> = {
      textBytes: evaluation.textBytes,
      textSha256: evaluation.textSha256,
    };
    if (evaluation.blockReason !== undefined) details['blockReason'] = evaluation.blockReason;
    if (evaluation.finishReason !== undefined) details['finishReason'] = evaluation.finishReason;
    const ratings = last === undefined ? undefined : safeRatings(last);
    if (ratings !== undefined) details['safetyRatings'] = ratings;
    const message =
      evaluation.blockReason !== undefined
        ? `the provider blocked the prompt (blockReason=${evaluation.blockReason})`
        : `the provider blocked the response (finishReason=${evaluation.finishReason ?? UNSPECIFIED_FINISH_REASON})`;
    return failure('LLM_SAFETY_BLOCK', message, details, attempts, repair);
  };

  // ---- attempt 1
  const first = await call(options.request, 1);
  if (!first.ok) {
    diagnostics.push({ attempt: 1, calls: first.calls, reasonKind: first.kind });
    return failure(
      first.code,
      first.message,
      first.details,
      first.calls > 0 ? 1 : 0,
      { attempted: false },
      first.retryable,
    );
  }
  last = first.response;
  addUsage(usageTotals, first.response.usageMetadata);
  const firstEval = evaluate(first.response, schema.validator, schema.schemaId);
  const firstFinish = first.response.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON;
  const firstDiag: AttemptDiagnostics = {
    attempt: 1,
    calls: first.calls,
    finishReason: firstFinish,
    textBytes: firstEval.textBytes,
    textSha256: firstEval.textSha256,
  };
  diagnostics.push(firstDiag);
  if (firstEval.kind === 'valid')
    return success(first.response, firstEval, 1, { attempted: false });
  if (firstEval.kind === 'blocked') {
    firstDiag.reasonKind = 'safety_block';
    return blockedFailure(firstEval, 1, { attempted: false });
  }
  firstDiag.reasonKind = firstEval.reason.kind;
  firstDiag.validationErrors = firstEval.validationErrors;
  firstDiag.validationErrorCount = firstEval.validationErrorCount;

  const invalidDetails = (
    evaluation: Extract<Evaluation, { kind: 'invalid' }>,
    finishReason: string,
  ): Record<string, unknown> => ({
    reasonKind: evaluation.reason.kind,
    reasonMessage: evaluation.reason.message,
    finishReason,
    textBytes: evaluation.textBytes,
    textSha256: evaluation.textSha256,
    validationErrorCount: evaluation.validationErrorCount,
    validationErrors: evaluation.validationErrors,
  });

  const repairWindowMs = budget.remainingMs() - budget.finalizeBudgetMs;
  const repairPlanned = repairWindowMs >= policy.minRepairWindowMs;
  logInvalid(1, firstEval, repairPlanned, firstFinish);
  if (!repairPlanned) {
    return failure(
      'INVALID_STRUCTURED_OUTPUT',
      `structured output invalid: kind=${firstEval.reason.kind} finishReason=${firstFinish}; no repair (not enough time left)`,
      {
        ...invalidDetails(firstEval, firstFinish),
        repair: { attempted: false, skippedReason: 'insufficient_time' },
      },
      1,
      { attempted: false, reasonKind: firstEval.reason.kind, skippedReason: 'insufficient_time' },
    );
  }

  // ---- attempt 2: the one repair call
  if (logger !== undefined) {
    logEvent(logger, 'info', 'structured_output_repair_attempt_started', {
      attempt: 1,
      reason: { kind: firstEval.reason.kind },
      llm: { schemaId: schema.schemaId },
    });
  }
  const repairText = buildRepairPrompt({
    schemaId: schema.schemaId,
    jsonSchema: schema.jsonSchema,
    reason: firstEval.reason,
    validationErrors: firstEval.validationErrors,
    ...(policy.includePreviousText ? { previousText: firstEval.text } : {}),
    maxPreviousTextBytes: policy.maxPreviousTextBytes,
  });
  const repairRequest: LlmRequestTemplate = {
    ...options.request,
    contents: [...options.request.contents, { text: repairText }],
  };
  const repairDone = (status: string, extra: Record<string, unknown> = {}): void => {
    if (logger === undefined) return;
    logEvent(
      logger,
      status === 'succeeded' ? 'info' : 'warn',
      'structured_output_repair_attempt_finished',
      { attempt: 1, status, ...extra },
    );
  };
  const repairReason = firstEval.reason.kind;
  const second = await call(repairRequest, 2);
  if (!second.ok) {
    diagnostics.push({ attempt: 2, calls: second.calls, reasonKind: second.kind });
    repairDone(second.kind === 'time_budget' ? 'skipped_time_budget' : 'provider_error', {
      code: second.code,
    });
    // The provider error is the actionable cause (LLM_UNAVAILABLE is retryable: a later attempt
    // of the step may produce valid output); the first attempt's problem stays in details.
    return failure(
      second.code,
      second.message,
      { ...second.details, firstAttempt: invalidDetails(firstEval, firstFinish) },
      second.calls > 0 ? 2 : 1,
      { attempted: second.calls > 0, reasonKind: repairReason },
      second.retryable,
    );
  }
  last = second.response;
  addUsage(usageTotals, second.response.usageMetadata);
  const secondEval = evaluate(second.response, schema.validator, schema.schemaId);
  const secondFinish = second.response.candidates[0]?.finishReason ?? UNSPECIFIED_FINISH_REASON;
  const secondDiag: AttemptDiagnostics = {
    attempt: 2,
    calls: second.calls,
    finishReason: secondFinish,
    textBytes: secondEval.textBytes,
    textSha256: secondEval.textSha256,
  };
  diagnostics.push(secondDiag);
  if (secondEval.kind === 'valid') {
    repairDone('succeeded');
    return success(second.response, secondEval, 2, { attempted: true, reasonKind: repairReason });
  }
  if (secondEval.kind === 'blocked') {
    secondDiag.reasonKind = 'safety_block';
    repairDone('blocked');
    return blockedFailure(secondEval, 2, { attempted: true, reasonKind: repairReason });
  }
  secondDiag.reasonKind = secondEval.reason.kind;
  secondDiag.validationErrors = secondEval.validationErrors;
  secondDiag.validationErrorCount = secondEval.validationErrorCount;
  repairDone('invalid', { reason: { kind: secondEval.reason.kind } });
  logInvalid(2, secondEval, false, secondFinish);
  return failure(
    'INVALID_STRUCTURED_OUTPUT',
    `structured output invalid: kind=${secondEval.reason.kind} finishReason=${secondFinish}; the repair attempt was invalid too`,
    {
      ...invalidDetails(secondEval, secondFinish),
      repair: { attempted: true },
      firstAttempt: { reasonKind: repairReason },
    },
    2,
    { attempted: true, reasonKind: repairReason },
  );
}
