import { ArtifactNotFoundError, parseGcsUri } from '@tda/artifacts';
import {
  TIMEFRAMES,
  validate,
  type ChartsManifest,
  type FlowRun,
  type FlowStep,
  type LlmPrompt,
  type LlmReportFile,
  type LlmUsageMetadata as ReportUsageMetadata,
  type StepType,
  type Timeframe,
  type ValidationIssue,
} from '@tda/contracts';
import { producingRunId } from '@tda/flow-engine';
import {
  assemblePrompt,
  canonicalJson,
  ContextInputError,
  DEFAULT_FINALIZE_BUDGET_MS,
  DEFAULT_REQUEST_DEADLINE_MS,
  outputSchemaOf,
  RegistryDocumentInvalidError,
  resolveLlmProfile,
  runStructuredOutput,
  TimeBudget,
  type AssembledPrompt,
  type ChartContextImage,
  type LlmClient,
  type LlmUsageMetadata,
  type PromptRegistry,
  type StructuredOutputFailure,
  type StructuredOutputPolicy,
  type StructuredOutputSuccess,
} from '@tda/llm';
import { logEvent, type Logger } from '@tda/observability';
import {
  StepError,
  StepInputError,
  type StepExecutionContext,
  type StepHandler,
  type StepRecoveryContext,
  type StepResult,
} from '@tda/worker-kit';

/** One upstream report given as context (inputs.previousReportStepIds, in order). */
export interface PreviousReportInput {
  stepId: string;
  gcsUri: string;
}

/**
 * `steps.<id>.inputs` of an LLM_REPORT step after validation (seed 002), with the upstream
 * artifact URIs resolved from the run document.
 */
export interface LlmReportInputs {
  promptId: string;
  /** Raw profile: checked by resolveLlmProfile in execute (LLM_PROFILE_INVALID, no model call). */
  llmProfile: unknown;
  ohlcvStepId: string;
  ohlcvGcsUri: string;
  chartsManifestStepId: string;
  chartsManifestGcsUri: string;
  previousReports: PreviousReportInput[];
  symbol: string;
  timeframe: Timeframe;
}

export interface LlmReportHandlerOptions {
  registry: PromptRegistry;
  client: LlmClient;
  /** For the pipeline's structured-output events (never prompt text or model output). */
  logger?: Logger;
  /** Upper bound of one model request (seed 002: 600 s). */
  requestDeadlineMs?: number;
  /** Reserve kept to write the artifact and finalize (seed 002: 120 s). */
  finalizeBudgetMs?: number;
  /** Backoff sleep of the pipeline (tests pass a fake one). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  policy?: Partial<StructuredOutputPolicy>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isTimeframe(value: unknown): value is Timeframe {
  return typeof value === 'string' && (TIMEFRAMES as readonly string[]).includes(value);
}

function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path || '/'} ${i.message}`)
    .join('; ');
}

/** Waits `ms`, resolving early when `signal` aborts (the pipeline checks the signal itself). */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Only the counts the report contract knows, and only when the provider gave the required two. */
function reportUsage(usage: LlmUsageMetadata | undefined): ReportUsageMetadata | undefined {
  if (usage?.promptTokenCount === undefined || usage.totalTokenCount === undefined)
    return undefined;
  const out: ReportUsageMetadata = {
    promptTokenCount: usage.promptTokenCount,
    totalTokenCount: usage.totalTokenCount,
  };
  if (usage.candidatesTokenCount !== undefined) {
    out.candidatesTokenCount = usage.candidatesTokenCount;
  }
  if (usage.thoughtsTokenCount !== undefined) out.thoughtsTokenCount = usage.thoughtsTokenCount;
  return out;
}

/**
 * `outputs.execution.llm` of a FAILED step (seed 002 "Finalize patch (failure)": partial metadata
 * when available): what the pipeline knows — the last response's finishReason, modelVersion,
 * requestId and usage, model attempts, provider calls, the repair — never model output.
 */
function failedLlmExecution(
  identity: Record<string, unknown>,
  result: StructuredOutputFailure,
): Record<string, unknown> {
  const usage = reportUsage(result.usageMetadata);
  return {
    ...identity,
    ...(result.finishReason === undefined ? {} : { finishReason: result.finishReason }),
    ...(result.modelVersion === undefined ? {} : { modelVersion: result.modelVersion }),
    ...(result.requestId === undefined ? {} : { requestId: result.requestId }),
    ...(usage === undefined ? {} : { usageMetadata: usage }),
    attempts: { total: result.attempts },
    repair: { ...result.repair },
    calls: result.calls,
  };
}

/** The report file's bytes: keys sorted at every depth, so the same report is the same bytes. */
export function serializeReport(report: LlmReportFile): Buffer {
  return Buffer.from(`${canonicalJson(report)}\n`, 'utf8');
}

/** The `outputs.execution.llm` metadata persisted in the run document (no model output). */
export function executionMetadataOf(report: LlmReportFile): Record<string, unknown> {
  const { metadata } = report;
  return {
    provider: metadata.provider,
    modelName: metadata.modelName,
    promptId: metadata.promptId,
    schemaId: metadata.schemaId,
    ...metadata.llm,
  };
}

/**
 * LLM_REPORT (seed 002): resolves the prompt and the llmProfile through the registry, reads the
 * OHLCV export, the charts manifest and its PNGs and the previous reports, assembles the prompt
 * within the context limits, runs the structured-output pipeline within the step's time budget,
 * and returns the `llm_report_file` (worker-owned metadata + validated model output) as the
 * primary artifact. Nothing of the prompt, the context or the model output reaches logs, errors
 * or the run document.
 */
export class LlmReportHandler implements StepHandler<LlmReportInputs> {
  readonly stepType = 'LLM_REPORT' as const;
  readonly registry: PromptRegistry;
  readonly client: LlmClient;
  private readonly logger: Logger | undefined;
  private readonly requestDeadlineMs: number;
  private readonly finalizeBudgetMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  private readonly policy: Partial<StructuredOutputPolicy> | undefined;

  constructor(options: LlmReportHandlerOptions) {
    this.registry = options.registry;
    this.client = options.client;
    this.logger = options.logger;
    this.requestDeadlineMs = options.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
    this.finalizeBudgetMs = options.finalizeBudgetMs ?? DEFAULT_FINALIZE_BUDGET_MS;
    this.sleep = options.sleep ?? abortableSleep;
    this.policy = options.policy;
  }

  validateInputs(run: FlowRun, stepId: string, step: FlowStep): LlmReportInputs {
    // seed 002 validation policy: extra fields are tolerated (prototype reality), only the
    // subset this worker uses is checked.
    const inputs = step.inputs;
    const llm = inputs['llm'];
    if (!isRecord(llm)) {
      throw new StepInputError('inputs.llm must be an object', { field: 'llm' });
    }
    const promptId = llm['promptId'];
    if (typeof promptId !== 'string' || promptId === '') {
      throw new StepInputError('inputs.llm.promptId must be a non-empty string', {
        field: 'llm.promptId',
      });
    }
    if (!isRecord(llm['llmProfile'])) {
      throw new StepInputError('inputs.llm.llmProfile must be an object', {
        field: 'llm.llmProfile',
      });
    }
    const timeframe = step.timeframe;
    if (!isTimeframe(timeframe)) {
      throw new StepInputError('an LLM_REPORT step needs a timeframe', { field: 'timeframe' });
    }
    // seed 002 invariant: the timeframe segment of the stepId, when it has one, is the step's.
    const segment = stepId.split(':')[1];
    if (isTimeframe(segment) && segment !== timeframe) {
      throw new StepInputError(`stepId names timeframe ${segment}, the step has ${timeframe}`, {
        field: 'timeframe',
      });
    }
    const symbol = run.scope.symbol;

    const ohlcv = this.upstream(run, step, 'ohlcvStepId', inputs['ohlcvStepId'], 'OHLCV_EXPORT');
    const charts = this.upstream(
      run,
      step,
      'chartsManifestStepId',
      inputs['chartsManifestStepId'],
      'CHART_EXPORT',
    );
    for (const [field, ref] of [
      ['ohlcvStepId', ohlcv],
      ['chartsManifestStepId', charts],
    ] as const) {
      if (ref.timeframe !== undefined && ref.timeframe !== timeframe) {
        throw new StepInputError(
          `inputs.${field} '${ref.stepId}' has timeframe ${ref.timeframe}, this step ${timeframe}`,
          { field, stepId: ref.stepId },
        );
      }
    }

    const rawPrevious = inputs['previousReportStepIds'] ?? [];
    if (!Array.isArray(rawPrevious)) {
      throw new StepInputError('inputs.previousReportStepIds must be an array of step ids', {
        field: 'previousReportStepIds',
      });
    }
    const seen = new Set<string>();
    const previousReports = rawPrevious.map((id: unknown, index) => {
      const field = `previousReportStepIds[${index}]`;
      const ref = this.upstream(run, step, field, id, 'LLM_REPORT');
      if (ref.stepId === stepId || seen.has(ref.stepId)) {
        throw new StepInputError(`inputs.${field} '${ref.stepId}' is repeated or this step`, {
          field,
          stepId: ref.stepId,
        });
      }
      seen.add(ref.stepId);
      return { stepId: ref.stepId, gcsUri: ref.gcsUri };
    });

    return {
      promptId,
      llmProfile: llm['llmProfile'],
      ohlcvStepId: ohlcv.stepId,
      ohlcvGcsUri: ohlcv.gcsUri,
      chartsManifestStepId: charts.stepId,
      chartsManifestGcsUri: charts.gcsUri,
      previousReports,
      symbol,
      timeframe,
    };
  }

  async execute(context: StepExecutionContext<LlmReportInputs>): Promise<StepResult> {
    const { inputs, signal } = context;
    context.heartbeat({ stage: 'resolve_profile' });
    // Pre-flight before anything else (seed 002): an unusable profile never reaches a model.
    const profile = await resolveLlmProfile(inputs.llmProfile, {
      registry: this.registry,
      provider: this.client.provider,
    });
    if (!profile.ok) {
      throw new StepError('LLM_PROFILE_INVALID', profile.error.message, {
        details: profile.error.details,
        retryable: false,
      });
    }
    const config = profile.config;
    if (config.schemaSha256Mismatch !== undefined && this.logger !== undefined) {
      // Informational only (seed 002): the registry schema is what the request uses.
      logEvent(this.logger, 'warn', 'llm_schema_hash_mismatch', {
        schemaId: config.schemaId,
        ...config.schemaSha256Mismatch,
      });
    }
    const prompt = await this.prompt(inputs.promptId);

    context.heartbeat({ stage: 'read_context' });
    const assembled = await this.assemble(context, prompt);
    signal.throwIfAborted();

    context.heartbeat({ stage: 'generate' });
    const result = await runStructuredOutput({
      client: this.client,
      request: {
        model: config.model,
        systemInstruction: assembled.prompt.systemInstruction,
        contents: assembled.prompt.contents,
        generationConfig: config.generationConfig,
        context: assembled.prompt.context,
        signal,
      },
      schema: outputSchemaOf(config),
      budget: TimeBudget.until(context.deadline, {
        maxRequestMs: this.requestDeadlineMs,
        finalizeBudgetMs: this.finalizeBudgetMs,
        clock: () => context.now(),
      }),
      sleep: this.sleep,
      ...(this.logger === undefined ? {} : { logger: this.logger }),
      ...(this.policy === undefined ? {} : { policy: this.policy }),
    });
    const identity = {
      provider: this.client.provider,
      modelName: config.model,
      promptId: inputs.promptId,
      schemaId: config.schemaId,
      schemaSha256: config.schemaSha256,
    };
    if (!result.ok) {
      // The pipeline's error is already sanitized (codes, sizes, hashes, schema-side messages);
      // the partial metadata goes to outputs.execution.llm of the FAILED step (seed 002).
      throw new StepError(result.error.code, result.error.message, {
        details: result.error.details,
        retryable: result.error.retryable,
        execution: { llm: failedLlmExecution(identity, result) },
      });
    }
    signal.throwIfAborted();

    const report = this.buildReport(context, {
      result,
      modelName: config.model,
      schemaId: config.schemaId,
      schemaVersion: config.schemaVersion,
      schemaSha256: config.schemaSha256,
      chartGcsUris: assembled.chartGcsUris,
    });
    const checked = validate.llmReportFile(report);
    const llm = {
      ...executionMetadataOf(report),
      repair: { ...result.repair },
      calls: result.calls,
    };
    if (!checked.ok) {
      // The output passed the registry schema, so this is our own metadata (or a registry schema
      // looser than the contract's invariants): never echo values, only schema paths.
      throw new StepError(
        'INVALID_STRUCTURED_OUTPUT',
        `llm_report_file fails its contract: ${checked.issues
          .slice(0, 5)
          .map((i) => i.path || '/')
          .join(', ')}`,
        {
          details: { issues: checked.issues.slice(0, 5).map((i) => ({ path: i.path })) },
          execution: { llm },
        },
      );
    }
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeReport(report), contentType: 'application/json' }],
      primaryUri: uri,
      execution: { llm },
    };
  }

  /**
   * Split-brain recovery (seed 002): the report of a crashed attempt exists. Finalize from it
   * without a model call when it parses and belongs to this run and step; otherwise null (the
   * step executes again and a different file becomes an artifact conflict, FAILED).
   */
  async recover(context: StepRecoveryContext<LlmReportInputs>): Promise<StepResult | null> {
    let parsed: unknown;
    try {
      parsed = JSON.parse((await context.artifacts.read(context.existingUri)).toString('utf8'));
    } catch (error) {
      if (error instanceof SyntaxError) return null;
      throw error;
    }
    const checked = validate.llmReportFile(parsed);
    if (
      !checked.ok ||
      checked.value.metadata.runId !== context.run.runId ||
      checked.value.metadata.stepId !== context.stepId
    ) {
      return null;
    }
    return {
      artifacts: [],
      primaryUri: context.existingUri,
      execution: { llm: executionMetadataOf(checked.value) },
    };
  }

  // -- inputs ----------------------------------------------------------------------------------

  private upstream(
    run: FlowRun,
    step: FlowStep,
    field: string,
    raw: unknown,
    stepType: StepType,
  ): { stepId: string; gcsUri: string; timeframe: string | undefined } {
    if (typeof raw !== 'string' || raw === '') {
      throw new StepInputError(`inputs.${field} must be a non-empty string`, { field });
    }
    const upstream = run.steps[raw];
    if (upstream === undefined) {
      throw new StepInputError(`inputs.${field} '${raw}' is not a step of this run`, {
        field,
        stepId: raw,
      });
    }
    if (upstream.stepType !== stepType) {
      throw new StepInputError(
        `inputs.${field} '${raw}' is a ${upstream.stepType} step, not ${stepType}`,
        { field, stepId: raw, stepType: upstream.stepType },
      );
    }
    if (!step.dependsOn.includes(raw)) {
      throw new StepInputError(`inputs.${field} '${raw}' is not in dependsOn`, {
        field,
        stepId: raw,
      });
    }
    if (upstream.status !== 'SUCCEEDED') {
      throw new StepInputError(`upstream step '${raw}' is ${upstream.status}, not SUCCEEDED`, {
        field,
        stepId: raw,
        status: upstream.status,
      });
    }
    const uri = upstream.outputs.gcs_uri;
    if (typeof uri !== 'string' || uri === '') {
      throw new StepInputError(`upstream step '${raw}' has no outputs.gcs_uri`, {
        field,
        stepId: raw,
      });
    }
    try {
      parseGcsUri(uri);
    } catch {
      throw new StepInputError(`upstream step '${raw}' has an invalid outputs.gcs_uri`, {
        field,
        stepId: raw,
      });
    }
    return { stepId: raw, gcsUri: uri, timeframe: upstream.timeframe };
  }

  private async prompt(promptId: string): Promise<LlmPrompt> {
    let prompt: LlmPrompt | null;
    try {
      prompt = await this.registry.getPrompt(promptId);
    } catch (error) {
      if (error instanceof RegistryDocumentInvalidError) {
        throw new StepError(error.code, error.message, {
          details: error.details,
          retryable: false,
        });
      }
      throw error; // registry unavailable: the harness decides
    }
    if (prompt === null) {
      throw new StepInputError(`inputs.llm.promptId '${promptId}' is not in the prompt registry`, {
        field: 'llm.promptId',
        promptId,
      });
    }
    return prompt;
  }

  // -- context ---------------------------------------------------------------------------------

  private async read(
    context: StepExecutionContext<LlmReportInputs>,
    uri: string,
    what: string,
  ): Promise<Buffer> {
    try {
      return await context.artifacts.read(uri);
    } catch (error) {
      if (error instanceof ArtifactNotFoundError) {
        throw new StepInputError(`${what} does not exist: ${uri}`, { uri });
      }
      throw error; // transient storage trouble: the harness decides (retry / nack)
    }
  }

  private async assemble(
    context: StepExecutionContext<LlmReportInputs>,
    prompt: LlmPrompt,
  ): Promise<{ prompt: AssembledPrompt; chartGcsUris: string[] }> {
    const { inputs, run, stepId } = context;
    const ohlcv = await this.read(context, inputs.ohlcvGcsUri, 'OHLCV artifact');
    const manifestBytes = await this.read(
      context,
      inputs.chartsManifestGcsUri,
      'charts manifest artifact',
    );
    // The manifest belongs to the run that executed the charts step: this run, or for a step a
    // rerun reused, the run it was reused from (outputs.execution.reusedFrom).
    const manifest = parseManifest(
      manifestBytes,
      inputs.chartsManifestGcsUri,
      producingRunId(run, inputs.chartsManifestStepId),
    );
    const charts: ChartContextImage[] = [];
    for (const item of manifest.items) {
      charts.push({
        uri: item.gcs_uri,
        png: await this.read(context, item.gcs_uri, `chart image ${item.chartTemplateId}`),
        description: item.description,
        chartTemplateId: item.chartTemplateId,
      });
    }
    const previousReports = [];
    for (const previous of inputs.previousReports) {
      previousReports.push({
        stepId: previous.stepId,
        uri: previous.gcsUri,
        json: await this.read(context, previous.gcsUri, `report of '${previous.stepId}'`),
      });
    }
    try {
      return {
        prompt: assemblePrompt({
          prompt,
          identity: {
            runId: run.runId,
            stepId,
            symbol: inputs.symbol,
            timeframe: inputs.timeframe,
          },
          context: {
            ohlcv: { uri: inputs.ohlcvGcsUri, json: ohlcv },
            chartsManifest: { uri: inputs.chartsManifestGcsUri, json: manifestBytes },
            charts,
            previousReports,
          },
        }),
        chartGcsUris: charts.map((c) => c.uri),
      };
    } catch (error) {
      if (error instanceof ContextInputError) {
        throw new StepInputError(error.message, { ...error.details });
      }
      throw error;
    }
  }

  private buildReport(
    context: StepExecutionContext<LlmReportInputs>,
    facts: {
      result: StructuredOutputSuccess;
      modelName: string;
      schemaId: string;
      schemaVersion: number;
      schemaSha256: string;
      chartGcsUris: string[];
    },
  ): LlmReportFile {
    const { inputs } = context;
    const { result } = facts;
    const usage = reportUsage(result.usageMetadata);
    const llm: LlmReportFile['metadata']['llm'] = {
      finishReason: result.finishReason,
      attempts: { total: result.attempts },
      schemaSha256: facts.schemaSha256,
    };
    if (result.modelVersion !== undefined) llm.modelVersion = result.modelVersion;
    if (result.requestId !== undefined) llm.requestId = result.requestId;
    if (usage !== undefined) llm.usageMetadata = usage;
    // No generatedAt: the file must be byte-identical when the step is executed again.
    return {
      metadata: {
        schemaVersion: facts.schemaVersion,
        runId: context.run.runId,
        stepId: context.stepId,
        symbol: inputs.symbol,
        timeframe: inputs.timeframe,
        promptId: inputs.promptId,
        schemaId: facts.schemaId,
        modelName: facts.modelName,
        provider: this.client.provider,
        inputs: {
          ohlcvGcsUri: inputs.ohlcvGcsUri,
          chartsManifestGcsUri: inputs.chartsManifestGcsUri,
          chartGcsUris: facts.chartGcsUris,
          previousReportGcsUris: inputs.previousReports.map((p) => p.gcsUri),
        },
        llm,
      },
      output: result.output as LlmReportFile['output'],
    };
  }
}

function parseManifest(data: Buffer, uri: string, runId: string): ChartsManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    throw new StepInputError(`charts manifest ${uri} is not JSON`, { uri });
  }
  const checked = validate.chartsManifest(parsed);
  if (!checked.ok) {
    throw new StepInputError(
      `charts manifest ${uri} violates charts_manifest.schema.json: ${describeIssues(checked.issues)}`,
      { uri },
    );
  }
  if (checked.value.runId !== runId) {
    throw new StepInputError(`charts manifest ${uri} belongs to another run`, { uri });
  }
  return checked.value;
}
