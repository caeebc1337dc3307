import type { ArtifactStore } from '@tda/artifacts';
import type { FlowCatalogue } from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
import type { MessageBroker } from '@tda/messaging';
import type { Logger, TdaMetrics } from '@tda/observability';
import type { IdTokenVerifier } from '@tda/service-runtime';
import type { OrchestratorConfig } from './config';

/**
 * What OrchestratorModule.forRoot receives: already-built adapter instances, so the local
 * launcher can compose every service in one process and tests can pass in-memory adapters.
 */
export interface OrchestratorModuleOptions {
  store: FlowRunStore;
  /** Publishes step-ready messages; createOrchestratorApp also consumes step events from it. */
  broker: MessageBroker;
  /**
   * Read-only here: GET /runs/{runId}/steps/{stepId}/artifact serves a step's primary artifact
   * through it (the orchestrator never writes artifacts).
   */
  artifacts: ArtifactStore;
  logger: Logger;
  /** Default: the system clock. */
  clock?: () => Date;
  /** Uniform [0, 1) for runId suffixes and retry jitter. Default: Math.random. */
  random?: () => number;
  config: OrchestratorConfig;
  /** Default: the deployment's flow catalogue (@tda/flow-engine flowCatalogue). */
  catalogue?: FlowCatalogue;
  /**
   * Prometheus instruments (served at GET /metrics). Default: createMetrics({service:
   * 'orchestrator'}) on its own registry; the local launcher may pass one on a shared registry.
   */
  metrics?: TdaMetrics;
  /**
   * Checks Google ID tokens of the admin OIDC principal (TDA_ADMIN_OIDC_*). Default: Google's
   * certificates when the config sets them, else none (only TDA_API_TOKEN is accepted). Tests
   * pass a verifier over a local key.
   */
  adminOidcVerifier?: IdTokenVerifier;
}
