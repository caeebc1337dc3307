import { ERROR_CODE_INFO, type ErrorCode } from '@tda/contracts';
import { type Logger, logEvent } from '@tda/observability';
import {
  LlmCallError,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type LlmUsageMetadata,
} from './llm-client.port';
import type { JsonSchemaObject, OutputSchemaValidator } from './output-schema';
import {
  buildRepairPrompt,
  DEFAULT_MAX_PREVIOUS_TEXT_BYTES,
  type InvalidOutputKind,
} from './repair-prompt';
import {
  addUsage,
  emptyUsage,
  evaluateResponse,
  finishReasonOf,
  invalidDetails,
  safeRatings,
  type OutputCheck,
  UNSPECIFIED_FINISH_REASON,
  type Evaluation,
  type InvalidEvaluation,
  type UsageTotals,
} from './structured-output.evaluation';
import type { TimeBudget } from './time-budget';

export {
  UNSPECIFIED_FINISH_REASON,
  type OutputCheck,
  type OutputRuleViolation,
  type UsageTotals,
} from './structured-output.evaluation';

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
  /**
   * The step's domain invariants, run on every schema-valid output: a violated rule is
   * `invariant_violation`, repaired once like a schema error, then INVALID_STRUCTURED_OUTPUT.
   */
  check?: OutputCheck;
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
  validationErrors?: InvalidEvaluation['validationErrors'];
  validationErrorCount?: number;
}

/** What every result counts, over every request of the run (seed 002 execution metadata). */
interface Counted {
  /** Model attempts: 1, or 2 when a repair call was made. */
  attempts: number;
  /** Provider requests, retries included. */
  calls: number;
  /** Requests that got an answer (a response, valid or not). */
  answered: number;
  /** Usage summed over every response received. */
  usageTotals: UsageTotals;
}

export interface StructuredOutputSuccess extends Counted {
  ok: true;
  /** The parsed output, valid against the registry schema. */
  output: Record<string, unknown>;
  /** The accepted response. */
  response: LlmResponse;
  finishReason: string;
  modelVersion?: string;
  requestId?: string;
  /** Usage of the accepted response as reported. */
  usageMetadata?: LlmUsageMetadata;
  repair: { attempted: boolean; reasonKind?: InvalidOutputKind };
  diagnostics: { textBytes: number; textSha256: string; attempts: AttemptDiagnostics[] };
}

export interface StructuredOutputFailure extends Counted {
  ok: false;
  /** ErrorInfo-shaped, sanitized. */
  error: { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> };
  /** Of the last response received (none when no call got an answer). */
  finishReason?: string;
  modelVersion?: string;
  requestId?: string;
  usageMetadata?: LlmUsageMetadata;
  repair: { attempted: boolean; reasonKind?: InvalidOutputKind; skippedReason?: string };
  diagnostics: { attempts: AttemptDiagnostics[] };
}

export type StructuredOutputResult = StructuredOutputSuccess | StructuredOutputFailure;

type CallFailure = {
  ok: false;
  code: ErrorCode;
  message: string;
  retryable: boolean;
  details: Record<string, unknown>;
  calls: number;
  kind: 'provider_error' | 'time_budget';
};
type CallOutcome = { ok: true; response: LlmResponse; calls: number } | CallFailure;
type Repair = StructuredOutputFailure['repair'];

/**
 * The step error's first words: the kind and finish reason; for broken rules also their ids
 * (our own words, never output text), so that the run document says which rules failed.
 */
function invalidSummary(evaluation: InvalidEvaluation, finishReason: string): string {
  const head = `structured output invalid: kind=${evaluation.reason.kind} finishReason=${finishReason}`;
  return evaluation.reason.kind === 'invariant_violation'
    ? `${head} (${evaluation.reason.message})`
    : head;
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
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
export function runStructuredOutput(
  options: RunStructuredOutputOptions,
): Promise<StructuredOutputResult> {
  return new StructuredOutputPipeline(options).run();
}

/** One run of the pipeline (one step execution): its counters and the last response. */
export class StructuredOutputPipeline {
  private readonly policy: StructuredOutputPolicy;
  private readonly usageTotals = emptyUsage();
  private readonly diagnostics: AttemptDiagnostics[] = [];
  private calls = 0;
  private answered = 0;
  private last: LlmResponse | undefined;

  constructor(private readonly options: RunStructuredOutputOptions) {
    this.policy = { ...DEFAULT_STRUCTURED_OUTPUT_POLICY, ...options.policy };
  }

  async run(): Promise<StructuredOutputResult> {
    const first = await this.call(this.options.request, 1);
    if (!first.ok) {
      this.diagnostics.push({ attempt: 1, calls: first.calls, reasonKind: first.kind });
      return this.callFailure(first, first.calls > 0 ? 1 : 0, { attempted: false });
    }
    const evaluation = this.evaluate(first.response, 1, first.calls);
    if (evaluation.kind === 'valid')
      return this.success(first.response, evaluation, 1, { attempted: false });
    if (evaluation.kind === 'blocked') return this.blocked(evaluation, 1, { attempted: false });
    return this.repair(evaluation, finishReasonOf(first.response));
  }

  /** seed 002: at most one repair call, only with enough time left above the finalize reserve. */
  private async repair(
    firstEval: InvalidEvaluation,
    firstFinish: string,
  ): Promise<StructuredOutputResult> {
    const { budget } = this.options;
    const repairPlanned =
      budget.remainingMs() - budget.finalizeBudgetMs >= this.policy.minRepairWindowMs;
    this.logInvalid(1, firstEval, repairPlanned, firstFinish);
    const reasonKind = firstEval.reason.kind;
    if (!repairPlanned) {
      return this.failure(
        'INVALID_STRUCTURED_OUTPUT',
        `${invalidSummary(firstEval, firstFinish)}; no repair (not enough time left)`,
        {
          ...invalidDetails(firstEval, firstFinish),
          repair: { attempted: false, skippedReason: 'insufficient_time' },
        },
        1,
        { attempted: false, reasonKind, skippedReason: 'insufficient_time' },
      );
    }
    this.log('info', 'structured_output_repair_attempt_started', {
      attempt: 1,
      reason: { kind: reasonKind },
      llm: { schemaId: this.options.schema.schemaId },
    });
    const second = await this.call(this.repairRequest(firstEval), 2);
    if (!second.ok) {
      this.diagnostics.push({ attempt: 2, calls: second.calls, reasonKind: second.kind });
      this.repairDone(second.kind === 'time_budget' ? 'skipped_time_budget' : 'provider_error', {
        code: second.code,
      });
      // The provider error is the actionable cause; the first attempt's problem stays in details.
      const withFirst = {
        ...second,
        details: { ...second.details, firstAttempt: invalidDetails(firstEval, firstFinish) },
      };
      return this.callFailure(withFirst, second.calls > 0 ? 2 : 1, {
        attempted: second.calls > 0,
        reasonKind,
      });
    }
    return this.afterRepair(second.response, second.calls, reasonKind);
  }

  private afterRepair(
    response: LlmResponse,
    calls: number,
    reasonKind: InvalidOutputKind,
  ): StructuredOutputResult {
    const evaluation = this.evaluate(response, 2, calls);
    const repair = { attempted: true, reasonKind };
    if (evaluation.kind === 'valid') {
      this.repairDone('succeeded');
      return this.success(response, evaluation, 2, repair);
    }
    if (evaluation.kind === 'blocked') {
      this.repairDone('blocked');
      return this.blocked(evaluation, 2, repair);
    }
    const finish = finishReasonOf(response);
    this.repairDone('invalid', { reason: { kind: evaluation.reason.kind } });
    this.logInvalid(2, evaluation, false, finish);
    return this.failure(
      'INVALID_STRUCTURED_OUTPUT',
      `${invalidSummary(evaluation, finish)}; the repair attempt was invalid too`,
      {
        ...invalidDetails(evaluation, finish),
        repair: { attempted: true },
        firstAttempt: { reasonKind },
      },
      2,
      repair,
    );
  }

  private repairRequest(firstEval: InvalidEvaluation): LlmRequestTemplate {
    const { schema, request } = this.options;
    const repairText = buildRepairPrompt({
      schemaId: schema.schemaId,
      jsonSchema: schema.jsonSchema,
      reason: firstEval.reason,
      validationErrors: firstEval.validationErrors,
      ...(this.policy.includePreviousText ? { previousText: firstEval.text } : {}),
      maxPreviousTextBytes: this.policy.maxPreviousTextBytes,
    });
    return { ...request, contents: [...request.contents, { text: repairText }] };
  }

  /** An answered call: counted, its usage summed, judged, its diagnostics recorded. */
  private evaluate(response: LlmResponse, attempt: number, calls: number): Evaluation {
    this.last = response;
    this.answered += 1;
    addUsage(this.usageTotals, response.usageMetadata);
    const { schema } = this.options;
    const evaluation = evaluateResponse(
      response,
      schema.validator,
      schema.schemaId,
      this.options.check,
    );
    const diagnostic: AttemptDiagnostics = {
      attempt,
      calls,
      finishReason: finishReasonOf(response),
      textBytes: evaluation.textBytes,
      textSha256: evaluation.textSha256,
    };
    if (evaluation.kind === 'blocked') diagnostic.reasonKind = 'safety_block';
    if (evaluation.kind === 'invalid') {
      diagnostic.reasonKind = evaluation.reason.kind;
      diagnostic.validationErrors = evaluation.validationErrors;
      diagnostic.validationErrorCount = evaluation.validationErrorCount;
    }
    this.diagnostics.push(diagnostic);
    return evaluation;
  }

  /** One model attempt: provider calls with retries, guarded by the budget. */
  private async call(request: LlmRequestTemplate, attempt: number): Promise<CallOutcome> {
    const { budget, client } = this.options;
    let attemptCalls = 0;
    for (let attemptTry = 1; ; attemptTry += 1) {
      const refused = this.refusal(attempt, attemptCalls);
      if (refused !== undefined) return refused;
      attemptCalls += 1;
      this.calls += 1;
      try {
        const response = await client.generate({
          ...request,
          attempt,
          deadlineMs: budget.requestDeadlineMs(),
        });
        return { ok: true, response, calls: attemptCalls };
      } catch (error) {
        const failed = this.callError(error, attempt, attemptTry, attemptCalls);
        if (failed !== undefined) return failed;
        await this.options.sleep(this.policy.baseDelayMs * 2 ** (attemptTry - 1), request.signal);
      }
    }
  }

  /** Why no call may start now: the signal aborted, or the finalize reserve is reached. */
  private refusal(attempt: number, calls: number): CallFailure | undefined {
    const { budget } = this.options;
    if (this.options.request.signal?.aborted === true) {
      const message = 'the model request was cancelled before it started';
      return {
        ok: false,
        code: 'CANCELLED',
        message,
        retryable: false,
        details: { attempt },
        calls,
        kind: 'provider_error',
      };
    }
    if (budget.canStartCall()) return undefined;
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
      calls,
      kind: 'time_budget',
    };
  }

  /** A failed provider call: final (returned) or to be retried after a backoff (undefined). */
  private callError(
    error: unknown,
    attempt: number,
    tries: number,
    calls: number,
  ): CallFailure | undefined {
    if (!(error instanceof LlmCallError)) {
      // the message of an unknown error may quote the request: only its class is kept
      const name = error instanceof Error ? error.name : typeof error;
      return {
        ok: false,
        code: 'INTERNAL_ERROR',
        message: `the LLM client failed unexpectedly (${name})`,
        retryable: false,
        details: { attempt, tries },
        calls,
        kind: 'provider_error',
      };
    }
    const details = { ...error.details, attempt, tries };
    const base = {
      ok: false as const,
      code: error.code,
      message: error.message.slice(0, 500),
      retryable: error.retryable,
      calls,
      kind: 'provider_error' as const,
    };
    if (!error.retryable) return { ...base, details };
    if (tries >= this.policy.maxTries)
      return { ...base, details: { ...details, retriesExhausted: true } };
    const { budget } = this.options;
    const delay = this.policy.baseDelayMs * 2 ** (tries - 1);
    if (budget.remainingMs() - delay < budget.finalizeBudgetMs) {
      return { ...base, details: { ...details, retryStoppedBy: 'time_budget' } };
    }
    return undefined;
  }

  private counted(attempts: number): Counted {
    return { attempts, calls: this.calls, answered: this.answered, usageTotals: this.usageTotals };
  }

  private success(
    response: LlmResponse,
    evaluation: Extract<Evaluation, { kind: 'valid' }>,
    attempts: number,
    repair: StructuredOutputSuccess['repair'],
  ): StructuredOutputSuccess {
    return {
      ok: true,
      output: evaluation.output,
      response,
      ...this.counted(attempts),
      finishReason: finishReasonOf(response),
      repair,
      diagnostics: {
        textBytes: evaluation.textBytes,
        textSha256: evaluation.textSha256,
        attempts: this.diagnostics,
      },
      ...(response.modelVersion === undefined ? {} : { modelVersion: response.modelVersion }),
      ...(response.responseId === undefined ? {} : { requestId: response.responseId }),
      ...(response.usageMetadata === undefined ? {} : { usageMetadata: response.usageMetadata }),
    };
  }

  private callFailure(
    failed: CallFailure,
    attempts: number,
    repair: Repair,
  ): StructuredOutputFailure {
    return this.failure(
      failed.code,
      failed.message,
      failed.details,
      attempts,
      repair,
      failed.retryable,
    );
  }

  private failure(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown>,
    attempts: number,
    repair: Repair,
    retryable: boolean = ERROR_CODE_INFO[code].retryable,
  ): StructuredOutputFailure {
    const { last } = this;
    return {
      ok: false,
      error: {
        code,
        message,
        retryable,
        details: { schemaId: this.options.schema.schemaId, ...details },
      },
      ...this.counted(attempts),
      ...(last === undefined
        ? {}
        : {
            finishReason: finishReasonOf(last),
            ...(last.modelVersion === undefined ? {} : { modelVersion: last.modelVersion }),
            ...(last.responseId === undefined ? {} : { requestId: last.responseId }),
            ...(last.usageMetadata === undefined ? {} : { usageMetadata: last.usageMetadata }),
          }),
      repair,
      diagnostics: { attempts: this.diagnostics },
    };
  }

  private blocked(
    evaluation: Extract<Evaluation, { kind: 'blocked' }>,
    attempts: number,
    repair: Repair,
  ): StructuredOutputFailure {
    const details: Record<string, unknown> = {
      textBytes: evaluation.textBytes,
      textSha256: evaluation.textSha256,
    };
    if (evaluation.blockReason !== undefined) details['blockReason'] = evaluation.blockReason;
    if (evaluation.finishReason !== undefined) details['finishReason'] = evaluation.finishReason;
    const ratings = this.last === undefined ? undefined : safeRatings(this.last);
    if (ratings !== undefined) details['safetyRatings'] = ratings;
    const message =
      evaluation.blockReason !== undefined
        ? `the provider blocked the prompt (blockReason=${evaluation.blockReason})`
        : `the provider blocked the response (finishReason=${evaluation.finishReason ?? UNSPECIFIED_FINISH_REASON})`;
    return this.failure('LLM_SAFETY_BLOCK', message, details, attempts, repair);
  }

  private logInvalid(
    attempt: number,
    evaluation: InvalidEvaluation,
    repairPlanned: boolean,
    finishReason: string,
  ): void {
    const { budget, schema } = this.options;
    this.log('warn', 'structured_output_invalid', {
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
  }

  private repairDone(status: string, extra: Record<string, unknown> = {}): void {
    this.log(
      status === 'succeeded' ? 'info' : 'warn',
      'structured_output_repair_attempt_finished',
      {
        attempt: 1,
        status,
        ...extra,
      },
    );
  }

  private log(
    level: 'info' | 'warn',
    event:
      | 'structured_output_invalid'
      | 'structured_output_repair_attempt_started'
      | 'structured_output_repair_attempt_finished',
    fields: Record<string, unknown>,
  ): void {
    if (this.options.logger !== undefined) logEvent(this.options.logger, level, event, fields);
  }
}
