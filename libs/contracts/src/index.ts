import type {
  ErrorInfo,
  FlowRun,
  StepEventMessage,
  StepReadyMessage,
  TriggerRequest,
} from './generated/types';
import * as compiled from './generated/validators';
import { type CompiledValidator, type ValidationResult, runValidator } from './validation';

export * from './generated/types';
export * from './generated/catalogue';
export * from './validation';

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
} as const;

export type ContractName = keyof typeof validate;
