import { ArtifactNotFoundError } from '@tda/artifacts';
import type { ChartsManifest, ErrorCode, LlmPrompt, LlmSchemaKind } from '@tda/contracts';
import { logEvent, type Logger } from '@tda/observability';
import type { LlmClient, LlmProvider, LlmUsageMetadata } from './llm-client.port';
import { ContextArtifactMissingError, PromptNotFoundError } from './llm.errors';
import { promptLeakCheck } from './prompt-leak.check';
import { resolveLlmProfile, type EffectiveLlmConfig } from './llm-profile';
import type { PromptRegistry } from './prompt-registry.port';
import {
  assemblePrompt,
  type AssembledPrompt,
  type ChartContextImage,
  type PromptAssemblyInput,
} from './prompt-assembly';
import {
  assembleRecommendationPrompt,
  type RecommendationPromptInput,
} from './recommendation-prompt-assembly';
import {
  outputSchemaOf,
  StructuredOutputPipeline,
  type OutputCheck,
  type StructuredOutputFailure,
  type StructuredOutputPolicy,
  type StructuredOutputSuccess,
} from './structured-output.pipeline';
import { DEFAULT_FINALIZE_BUDGET_MS, DEFAULT_REQUEST_DEADLINE_MS, TimeBudget } from './time-budget';

export interface LlmStepRuntimeOptions {
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
  /**
   * The output the step's registry schema must describe (default LLM_REPORT_OUTPUT): pre-flight
   * checks its schemaId convention and minimal invariants.
   */
  outputKind?: LlmSchemaKind;
}

/** Who is asked what: the resolved prompt and request config of one LLM step. */
export interface LlmCallPlan {
  prompt: LlmPrompt;
  config: EffectiveLlmConfig;
  identity: {
    provider: LlmProvider;
    modelName: string;
    promptId: string;
    schemaId: string;
    schemaSha256: string;
  };
}

/**
 * `outputs.execution.llm` of an LLM step (seed 002 execution metadata): every request of the
 * step is counted — requests made (retries included), answered calls, the repair, and the usage
 * summed over all answers — plus the last answer's provider facts. Never model output.
 */
export type LlmExecution = LlmCallPlan['identity'] & {
  requests: number;
  answered: number;
  attempts: { total: number };
  repair: StructuredOutputSuccess['repair'] | StructuredOutputFailure['repair'];
  usage: StructuredOutputSuccess['usageTotals'];
  finishReason?: string;
  modelVersion?: string;
  requestId?: string;
  usageMetadata?: LlmUsageMetadata;
};

export type LlmGeneration =
  | { ok: true; result: StructuredOutputSuccess; llm: LlmExecution }
  | {
      ok: false;
      error: {
        code: ErrorCode;
        message: string;
        retryable: boolean;
        details: Record<string, unknown>;
      };
      llm: LlmExecution;
    };

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

/**
 * What every LLM step does around its model call (seed 002), so that a step handler holds only
 * what its own artifact says: the pre-flight (profile and schema from the registry, then the
 * prompt; an unusable profile never reaches a model), the chart images of a manifest, prompt
 * assembly with the context size limits, and the structured-output pipeline within the step's
 * time budget (unanswered calls retried here, at most one repair, nothing started inside the
 * finalize reserve).
 */
export class LlmStepRuntime {
  readonly client: LlmClient;
  readonly registry: PromptRegistry;
  private readonly requestDeadlineMs: number;
  private readonly finalizeBudgetMs: number;

  constructor(private readonly options: LlmStepRuntimeOptions) {
    this.client = options.client;
    this.registry = options.registry;
    this.requestDeadlineMs = options.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
    this.finalizeBudgetMs = options.finalizeBudgetMs ?? DEFAULT_FINALIZE_BUDGET_MS;
  }

  get provider(): LlmProvider {
    return this.client.provider;
  }

  /** Pre-flight: LLM_PROFILE_INVALID before anything else, then the prompt (INVALID_STEP_INPUTS). */
  async plan(llm: { promptId: string; llmProfile: unknown }): Promise<LlmCallPlan> {
    const profile = await resolveLlmProfile(llm.llmProfile, {
      registry: this.registry,
      provider: this.client.provider,
      kind: this.options.outputKind ?? 'LLM_REPORT_OUTPUT',
    });
    if (!profile.ok) throw profile.error;
    const { config } = profile;
    if (config.schemaSha256Mismatch !== undefined && this.options.logger !== undefined) {
      // Informational only (seed 002): the registry schema is what the request uses.
      logEvent(this.options.logger, 'warn', 'llm_schema_hash_mismatch', {
        schemaId: config.schemaId,
        ...config.schemaSha256Mismatch,
      });
    }
    const prompt = await this.registry.getPrompt(llm.promptId);
    if (prompt === null) throw new PromptNotFoundError(llm.promptId);
    const identity = {
      provider: this.client.provider,
      modelName: config.model,
      promptId: llm.promptId,
      schemaId: config.schemaId,
      schemaSha256: config.schemaSha256,
    };
    return { prompt, config, identity };
  }

  /** The PNGs a charts manifest lists, in manifest order, with their descriptions. */
  async readCharts(
    manifest: ChartsManifest,
    read: (uri: string) => Promise<Buffer>,
  ): Promise<ChartContextImage[]> {
    const charts: ChartContextImage[] = [];
    for (const item of manifest.items) {
      let png: Buffer;
      try {
        png = await read(item.gcs_uri);
      } catch (error) {
        if (error instanceof ArtifactNotFoundError) {
          throw new ContextArtifactMissingError(
            `chart image ${item.chartTemplateId}`,
            item.gcs_uri,
          );
        }
        throw error; // storage trouble: retryable, the harness decides
      }
      charts.push({
        uri: item.gcs_uri,
        png,
        description: item.description,
        chartTemplateId: item.chartTemplateId,
      });
    }
    return charts;
  }

  /** seed 002 prompt assembly with its limits (ContextInputError: INVALID_STEP_INPUTS). */
  assemble(plan: LlmCallPlan, input: Omit<PromptAssemblyInput, 'prompt'>): AssembledPrompt {
    return assemblePrompt({ prompt: plan.prompt, ...input });
  }

  /** The prompt of an LLM_RECOMMENDATION (reports by reportId, account, last close at asOf). */
  assembleRecommendation(
    plan: LlmCallPlan,
    input: Omit<RecommendationPromptInput, 'prompt'>,
  ): AssembledPrompt {
    return assembleRecommendationPrompt({ prompt: plan.prompt, ...input });
  }

  /**
   * The structured-output pipeline, budgeted to end before the step deadline's reserve. `check`:
   * the step's domain invariants on a schema-valid output (a broken rule is invalid output,
   * repaired once, then INVALID_STRUCTURED_OUTPUT naming the rules).
   */
  async generate(
    plan: LlmCallPlan,
    assembled: AssembledPrompt,
    step: { deadline: Date; signal: AbortSignal; now: () => Date; check?: OutputCheck },
  ): Promise<LlmGeneration> {
    const { config } = plan;
    // Every step: no quoting of its own instructions, then the step's rules.
    const leak = promptLeakCheck(plan.prompt);
    const check: OutputCheck = (output) => [...leak(output), ...(step.check?.(output) ?? [])];
    const pipeline = new StructuredOutputPipeline({
      client: this.client,
      request: {
        model: config.model,
        systemInstruction: assembled.systemInstruction,
        contents: assembled.contents,
        generationConfig: config.generationConfig,
        context: assembled.context,
        signal: step.signal,
      },
      schema: outputSchemaOf(config),
      budget: TimeBudget.until(step.deadline, {
        maxRequestMs: this.requestDeadlineMs,
        finalizeBudgetMs: this.finalizeBudgetMs,
        clock: step.now,
      }),
      sleep: this.options.sleep ?? abortableSleep,
      ...(this.options.logger === undefined ? {} : { logger: this.options.logger }),
      ...(this.options.policy === undefined ? {} : { policy: this.options.policy }),
      check,
    });
    const result = await pipeline.run();
    const llm = llmExecution(plan.identity, result);
    return result.ok ? { ok: true, result, llm } : { ok: false, error: result.error, llm };
  }
}

/** The execution metadata of a pipeline run (success or failure): counts, never output. */
export function llmExecution(
  identity: LlmCallPlan['identity'],
  result: StructuredOutputSuccess | StructuredOutputFailure,
): LlmExecution {
  return {
    ...identity,
    requests: result.calls,
    answered: result.answered,
    attempts: { total: result.attempts },
    repair: { ...result.repair },
    usage: { ...result.usageTotals },
    ...(result.finishReason === undefined ? {} : { finishReason: result.finishReason }),
    ...(result.modelVersion === undefined ? {} : { modelVersion: result.modelVersion }),
    ...(result.requestId === undefined ? {} : { requestId: result.requestId }),
    ...(result.usageMetadata === undefined ? {} : { usageMetadata: result.usageMetadata }),
  };
}
