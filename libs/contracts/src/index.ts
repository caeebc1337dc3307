import type {
  ApiError,
  ChartsManifest,
  ErrorInfo,
  FlowRun,
  LlmProfile,
  LlmPrompt,
  LlmReportFile,
  LlmSchema,
  OhlcvExport,
  StepEventMessage,
  StepReadyMessage,
  TriggerRequest,
} from './generated/types';
import * as compiled from './generated/validators';
import { type CompiledValidator, type ValidationResult, runValidator } from './validation';

export * from './generated/types';
export * from './generated/catalogue';
export * from './validation';
export * from './tda-error';

/**
 * Compiled validators for every contract (ajv standalone code generated from contracts/).
 * Each returns a typed value or a list of issues naming the offending paths.
 */
export const validate = {
  error: (data: unknown): ValidationResult<ErrorInfo> =>
    runValidator(compiled.validateError as CompiledValidator, data),
  flowRun: (data: unknown): ValidationResult<FlowRun> =>
    runValidator(compiled.validateFlowRun as CompiledValidator, data),
  stepReady: (data: unknown): ValidationResult<StepReadyMessage> =>
    runValidator(compiled.validateStepReady as CompiledValidator, data),
  stepEvent: (data: unknown): ValidationResult<StepEventMessage> =>
    runValidator(compiled.validateStepEvent as CompiledValidator, data),
  triggerRequest: (data: unknown): ValidationResult<TriggerRequest> =>
    runValidator(compiled.validateTriggerRequest as CompiledValidator, data),
  ohlcvExport: (data: unknown): ValidationResult<OhlcvExport> =>
    runValidator(compiled.validateOhlcvExport as CompiledValidator, data),
  chartsManifest: (data: unknown): ValidationResult<ChartsManifest> =>
    runValidator(compiled.validateChartsManifest as CompiledValidator, data),
  llmReportFile: (data: unknown): ValidationResult<LlmReportFile> =>
    runValidator(compiled.validateLlmReportFile as CompiledValidator, data),
  llmPrompt: (data: unknown): ValidationResult<LlmPrompt> =>
    runValidator(compiled.validateLlmPrompt as CompiledValidator, data),
  llmSchema: (data: unknown): ValidationResult<LlmSchema> =>
    runValidator(compiled.validateLlmSchema as CompiledValidator, data),
  llmProfile: (data: unknown): ValidationResult<LlmProfile> =>
    runValidator(compiled.validateLlmProfile as CompiledValidator, data),
  apiError: (data: unknown): ValidationResult<ApiError> =>
    runValidator(compiled.validateApiError as CompiledValidator, data),
} as const;

export type ContractName = keyof typeof validate;
