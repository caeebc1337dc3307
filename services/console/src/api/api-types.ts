import type {
  AccountSnapshot,
  ChartsManifest,
  FlowRun as RunDocumentContract,
  FlowStep,
  LlmExecutionMetadata,
  LlmRecommendationFile,
  LlmReportFile,
  OhlcvExport,
} from '@tda/contracts';
import type { components, operations } from './schema.gen';

/*
 * Names for the generated API types (schema.gen.ts) the console uses. Aliases only: every shape
 * comes from the OpenAPI document, or — where the document abridges it — from the contracts'
 * generated types (@tda/contracts, type-only: nothing of the server reaches the bundle).
 */

type Schemas = components['schemas'];

export type ApiErrorBody = Schemas['ApiError'];
export type ApiFlowRun = Schemas['FlowRun'];
export type RunListPage = Schemas['RunListPage'];
export type RunStatus = ApiFlowRun['status'];
export type StepStatus = ApiFlowRun['steps'][string]['status'];
export type StepType = ApiFlowRun['steps'][string]['stepType'];
export type BlockedOn = Schemas['BlockedOn'];
export type TriggerRequest = Schemas['TriggerRequest'];
export type ReconcileReport = Schemas['ReconcileReport'];
export type DriftItem = Schemas['DriftItem'];
export type ReplayRequest = Schemas['ReplayRequest'];
export type ReplayResponse = Schemas['ReplayResponse'];
export type ListRunsQuery = NonNullable<operations['listRuns']['parameters']['query']>;

export type Principal = Schemas['Principal'];
export type Role = Principal['role'];
export type ApiToken = Schemas['ApiToken'];
export type ApiTokenRequest = Schemas['ApiTokenRequest'];
export type CreatedToken = Schemas['ApiTokenCreated'];

/** A catalogue entry; `scopeSchema` is the JSON Schema the trigger form is generated from. */
export type FlowSummary = Schemas['FlowList']['flows'][number];
export type RunsQuery = ListRunsQuery;
/** The `data:` of a run event (GET /events/stream, /runs/{runId}/events). */
export type RunEventData = Schemas['RunEvent'];

/**
 * The run document. The OpenAPI FlowRun is abridged to its top level (steps' readyAt, lease,
 * error, outputs.execution are described only in contracts/flow_run.schema.json), so the console
 * reads a run through the contract's generated type. `toRunDocument` is the one place the API
 * answer is viewed that way.
 */
export type RunDocument = RunDocumentContract;
export type RunStep = FlowStep;

export function toRunDocument(run: ApiFlowRun): RunDocument {
  // Same JSON: the document's FlowRun is a subset of the contract (openapi.document.ts).
  return run as unknown as RunDocument;
}

export type {
  AccountSnapshot,
  ChartsManifest,
  LlmExecutionMetadata,
  LlmRecommendationFile,
  LlmReportFile,
  OhlcvExport,
};
