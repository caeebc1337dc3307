/**
 * Injection tokens of the orchestrator's collaborators (registered by OrchestratorModule.forRoot
 * from OrchestratorModuleOptions). Each provider injects only the ones it uses, typed as narrowly
 * as it uses them (a config slice, a Publisher rather than the whole broker).
 */

/** FlowRunStore (@tda/flow-store). */
export const RUN_STORE = Symbol('tda.orchestrator.runStore');
/** MessageBroker (@tda/messaging): step-ready publishing, replay seeks and snapshots. */
export const MESSAGE_BROKER = Symbol('tda.orchestrator.messageBroker');
/** ArtifactStore (@tda/artifacts), read-only here. */
export const ARTIFACT_STORE = Symbol('tda.orchestrator.artifactStore');
/** ReportIndexStore (@tda/report-index): reports/{reportId}, recommendations/{recoId}. */
export const REPORT_INDEX = Symbol('tda.orchestrator.reportIndex');
/** Logger (@tda/observability). */
export const LOGGER = Symbol('tda.orchestrator.logger');
/** Clock: what decisions and timestamps read as "now". */
export const CLOCK = Symbol('tda.orchestrator.clock');
/** RandomSource: runId suffixes and retry jitter. */
export const RANDOM = Symbol('tda.orchestrator.random');
/** OrchestratorConfig (config.ts). */
export const ORCHESTRATOR_CONFIG = Symbol('tda.orchestrator.config');
/** FlowCatalogue (@tda/flow-engine). */
export const FLOW_CATALOGUE = Symbol('tda.orchestrator.flowCatalogue');
/** MarketCoverage (runs/run-preflight.service.ts): how far the market data reaches (asOf). */
export const MARKET_COVERAGE = Symbol('tda.orchestrator.marketCoverage');
/** TdaMetrics (@tda/observability). */
export const METRICS = Symbol('tda.orchestrator.metrics');
/** IdTokenVerifier of the admin OIDC principal, or null when none is configured. */
export const ADMIN_ID_TOKEN_VERIFIER = Symbol('tda.orchestrator.adminIdTokenVerifier');

/** RunChangeFeed (@tda/flow-store) for live event streams, or null when the store has none. */
export const RUN_CHANGE_FEED = Symbol('tda.orchestrator.runChangeFeed');
/** ms that app.close() lets HTTP requests in progress finish before it cuts them. */
export const HTTP_DRAIN_MS = Symbol('tda.orchestrator.httpDrainMs');

export type Clock = () => Date;
/** Uniform [0, 1). */
export type RandomSource = () => number;
