export * from './config';
export * from './orchestrator.options';
export * from './orchestrator.errors';
export * from './orchestrator.module';
export * from './orchestrator.app';
export { RunsService } from './runs/runs.service';
export { RunTrigger, type TriggerResult } from './runs/run-trigger.service';
export {
  Reconciler,
  type ReconcileMode,
  type ReconcilePassOptions,
  type ReconcileReport,
  type RunDrift,
} from './reconcile/reconciler.service';
export { RunWriter } from './dispatch/run-writer.service';
export type {
  DispatchPolicy,
  RunDecision,
  RunWriteOutcome,
  WriteCause,
} from './dispatch/run-decision.types';
export { StepDispatcher } from './dispatch/step-dispatcher.service';
export { StepEventsHandler } from './step-events/step-events.handler';
export { ARTIFACT_SHA256_HEADER, ARTIFACT_URI_HEADER, OWNER_HEADER } from './http/runs.controller';
export {
  MAX_ARTIFACT_RESPONSE_BYTES,
  StepArtifactService,
  type StepArtifact,
} from './runs/step-artifact.service';
export { buildOpenApiDocument } from './http/openapi.document';
