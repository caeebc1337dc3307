import type { AccountStore } from '@tda/accounts';
import type { ArtifactStore } from '@tda/artifacts';
import type { FlowCatalogue } from '@tda/flow-engine';
import type {
  EvaluationStore,
  FlowRunStore,
  RunChangeFeed,
  ScheduleStore,
  SignalStore,
  StepCheckpointStore,
} from '@tda/flow-store';
import type { CandleSource } from '@tda/market-data';
import type { MessageBroker } from '@tda/messaging';
import type { ReportIndexStore } from '@tda/report-index';
import type { Logger, TdaMetrics } from '@tda/observability';
import type { IdentityStore } from '@tda/identity';
import type {
  GoogleUserIdTokenVerifier,
  IapJwtVerifier,
  IdTokenVerifier,
} from '@tda/service-runtime';
import type { OrchestratorConfig } from './config';
import type { MarketCoverage } from './runs/run-preflight.service';

/**
 * What OrchestratorModule.forRoot receives: already-built adapter instances, so the local
 * launcher can compose every service in one process and tests can pass in-memory adapters.
 */
export interface OrchestratorModuleOptions {
  store: FlowRunStore;
  /** Live event streams' source. Default: the store when it is one (both adapters are). */
  changeFeed?: RunChangeFeed;
  /** Backtest best-so-far (step checkpoints). Default: the store when it is one (both are). */
  checkpoints?: StepCheckpointStore;
  /** Publishes step-ready messages; createOrchestratorApp also consumes step events from it. */
  broker: MessageBroker;
  /**
   * Read-only here: GET /runs/{runId}/steps/{stepId}/artifact serves a step's primary artifact
   * through it (the orchestrator never writes artifacts).
   */
  artifacts: ArtifactStore;
  /**
   * The reports/recommendations index (seed 001). The orchestrator is its only writer (the
   * entries of SUCCEEDED LLM steps, create-only) and serves GET /reports, /recommendations.
   */
  reportIndex: ReportIndexStore;
  logger: Logger;
  /** Default: the system clock. */
  clock?: () => Date;
  /** Uniform [0, 1) for runId suffixes and retry jitter. Default: Math.random. */
  random?: () => number;
  config: OrchestratorConfig;
  /**
   * How long app.close() lets HTTP requests in progress finish before it cuts their
   * connections (default 5 s, within Cloud Run's 10 s after SIGTERM).
   */
  httpDrainMs?: number;
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
  /** People's Google ID tokens (default: Google's keys when TDA_USER_OIDC_AUDIENCE is set). */
  userOidcVerifier?: Pick<GoogleUserIdTokenVerifier, 'verify'>;
  /** Identity-Aware Proxy's signed header (default: IAP's keys when TDA_IAP_AUDIENCE is set). */
  iapVerifier?: Pick<IapJwtVerifier, 'verify'>;
  /**
   * api_tokens and user_identities. Default: an empty in-memory store; main.ts and the local
   * launcher pass `Backends.identities`.
   */
  identities?: IdentityStore;
  /**
   * accounts/{accountId} (the accounts API and the trigger's account check). Default: an empty
   * in-memory store; main.ts and the local launcher pass `Backends.accounts`.
   */
  accounts?: AccountStore;
  /**
   * flow_schedules and signals (flow 7). Default: empty in-memory stores; main.ts and the local
   * launcher pass `Backends.schedules` / `Backends.signals`.
   */
  schedules?: ScheduleStore;
  signals?: SignalStore;
  /** evaluations (walk-forward). Default: in memory; main.ts and the launcher pass Backends'. */
  evaluations?: EvaluationStore;
  /**
   * How far the market data reaches, for the run's asOf at trigger, and (when it is a whole
   * CandleSource) the candles evaluations are scored on. Default: the bundled datasets (what
   * the OHLCV worker reads unless TDA_MARKET_DATA=ccxt).
   */
  marketData?: MarketCoverage | CandleSource;
}
