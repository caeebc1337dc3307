import {
  ERROR_CODES,
  TdaError,
  type Account,
  type ApiToken,
  type ApiTokenRequest,
  type BacktestJob,
  type BacktestJobPage,
  type EvaluationPage,
  type EvaluationRequest,
  type EvaluationView,
  type BacktestStrategyKind,
  type BacktestTop,
  type ErrorCode,
  type FlowRun,
  type FlowSchedule,
  type FlowScheduleRequest,
  type PaperPosition,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
  type RiskLimits,
  type Role,
  type Signal,
  type TriggerRequest,
  type UserIdentity,
  type UserIdentityRequest,
} from '@tda/contracts';

function isErrorCode(value: unknown): value is ErrorCode {
  return (ERROR_CODES as readonly unknown[]).includes(value);
}

/**
 * An error response of the TDA API ({code, message, details}) or a transport failure (status
 * 0). A body without a known code (a proxy's HTML page, say) is INTERNAL_ERROR.
 */
export class ApiError extends TdaError {
  constructor(
    readonly status: number,
    code: unknown,
    message: string,
    details?: unknown,
  ) {
    super(isErrorCode(code) ? code : 'INTERNAL_ERROR', message, {
      ...(typeof details === 'object' && details !== null && !Array.isArray(details)
        ? { details: details as Record<string, unknown> }
        : {}),
    });
  }
}

export interface RunPage {
  runs: FlowRun[];
  nextCursor: string | null;
}

export interface ListRunsParams {
  limit?: number;
  cursor?: string;
  status?: string;
  flowKey?: string;
  ownerId?: string;
}

export interface TriggerResult {
  run: FlowRun;
  /** false when an idempotency key matched an existing run. */
  created: boolean;
}

export interface ReplayRequest {
  subscription: string;
  time?: string;
  snapshot?: string;
  dryRun?: boolean;
}

/** The parts of POST /admin/replay's answer the CLI prints (see the OpenAPI ReplayResponse). */
export interface ReplayAnswer {
  subscription: string;
  kind: 'step_ready' | 'step_events';
  dryRun: boolean;
  seeked: boolean;
  since: string;
  note: string;
  scannedRuns: number;
  truncated: boolean;
  counts: Record<string, number>;
  steps?: { runId: string; stepId: string; summary: string }[];
  runs?: { runId: string; summary: string; events: unknown[] }[];
}

/** Query parameters of GET /reports and GET /recommendations (undefined ones are left out). */
export type IndexListParams = Record<string, string | number | undefined>;

export interface ReportPage {
  reports: ReportIndexEntry[];
  nextCursor: string | null;
}

export interface RecommendationPage {
  recommendations: RecommendationIndexEntry[];
  nextCursor: string | null;
}

/** The parts of POST /admin/index/backfill's answer the CLI prints (OpenAPI IndexBackfillReport). */
export interface IndexBackfillAnswer {
  dryRun: boolean;
  scannedRuns: number;
  truncated: boolean;
  counts: { created: number; wouldCreate: number; alreadyIndexed: number; unreadable: number };
  items: {
    runId: string;
    stepId: string;
    kind: string;
    id: string;
    outcome: string;
    reason?: string;
  }[];
  itemsTruncated: boolean;
}

function queryString(params: IndexListParams): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) query.set(key, String(value));
  }
  return query.size > 0 ? `?${query.toString()}` : '';
}

/** POST /accounts body (see the OpenAPI AccountCreateRequest). */
export interface AccountCreateBody {
  accountId: string;
  quoteCurrency: string;
  name?: string;
  exchange?: string;
  cash?: number;
  positions?: PaperPosition[];
  riskLimits?: RiskLimits;
}

/** PUT /accounts/{accountId} body: the fields to replace. */
export interface AccountChangesBody {
  name?: string;
  cash?: number;
  positions?: PaperPosition[];
  riskLimits?: RiskLimits;
}

export interface AccountPage {
  accounts: Account[];
  nextCursor: string | null;
}

/** A schedule as GET/POST /schedules… answer it: the document and its next fire times. */
export interface ScheduleView extends FlowSchedule {
  /** The next 5 fire times (none while paused); list entries may lack it. */
  nextFireTimes?: string[];
}

export interface SchedulePage {
  schedules: ScheduleView[];
  nextCursor: string | null;
}

/** POST /schedules/{scheduleId}/fire: the slot's one run. */
export interface ScheduleFireAnswer {
  scheduleId: string;
  slotAt: string;
  runId: string;
  /** false: the slot had been fired before (its existing run). */
  created: boolean;
}

export interface SignalPage {
  signals: Signal[];
  nextCursor: string | null;
}

/**
 * POST /backtests/jobs body (seed 003 job request): every strategy parameter and execution field
 * is a list of values to combine; absent execution lists are the runtime defaults.
 */
export interface BacktestJobRequest {
  symbol: string;
  timeframe?: string;
  asOf?: string;
  bars?: number;
  strategy: { kind: BacktestStrategyKind; ma?: 'ema' | 'sma'; params: Record<string, number[]> };
  execution?: {
    direction?: ('long_only' | 'long_short')[];
    fraction?: number[];
    feeBps?: number[];
    slippageBps?: number[];
    stopLossPct?: number[];
    takeProfitPct?: number[];
    trailingStopPct?: number[];
  };
  top_k?: number;
  preselect?: number;
  top_trades_n?: number;
  idempotencyKey?: string;
}

export interface BacktestJobCreated {
  job: BacktestJob;
  /** false when an idempotency key matched an existing job (200). */
  created: boolean;
}

/** GET /me (the orchestrator's Principal). */
export interface Principal {
  ownerId: string;
  role: Role;
  method: string;
  subject: string;
}

export interface ApiClientOptions {
  baseUrl: string;
  token: string;
  /** Sent as X-Serverless-Authorization (Cloud Run IAM) when set. */
  identityToken?: string;
  /** An admin acting for this owner: sent as X-TDA-Owner on every request. */
  actingOwner?: string;
  /** Per-request timeout. */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/** A small typed client of the orchestrator HTTP API, used by the CLI and the local launcher. */
export class ApiClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetchImpl ?? fetch;
  }

  async trigger(request: TriggerRequest): Promise<TriggerResult> {
    const { status, body } = await this.request('POST', '/runs', request);
    return { run: body as FlowRun, created: status === 201 };
  }

  async getRun(runId: string): Promise<FlowRun> {
    return (await this.request('GET', `/runs/${encodeURIComponent(runId)}`)).body as FlowRun;
  }

  /** `ownerId` (admin only) is sent as X-TDA-Owner: the acting owner is the list's filter. */
  async listRuns(params: ListRunsParams = {}): Promise<RunPage> {
    const { ownerId, ...filters } = params;
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(filters)) {
      if (value !== undefined) query.set(key, String(value));
    }
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    const headers: Record<string, string> = ownerId === undefined ? {} : { 'x-tda-owner': ownerId };
    return (await this.request('GET', `/runs${suffix}`, undefined, headers)).body as RunPage;
  }

  async cancel(runId: string): Promise<FlowRun> {
    return (await this.request('POST', `/runs/${encodeURIComponent(runId)}/cancel`))
      .body as FlowRun;
  }

  async blockedOn(runId: string, stepId: string): Promise<unknown> {
    const path = `/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(stepId)}/blocked-on`;
    return (await this.request('GET', path)).body;
  }

  /**
   * The step's primary artifact as stored (GET /runs/{runId}/steps/{stepId}/artifact): 409
   * CONFLICT while the step has none, 502 when storage cannot serve it.
   */
  async stepArtifact(runId: string, stepId: string): Promise<unknown> {
    const path = `/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(stepId)}/artifact`;
    return (await this.request('GET', path)).body;
  }

  /** POST /runs/{runId}/steps/{stepId}/retry, or /runs/{runId}/retry (every FAILED step). */
  async retry(runId: string, stepId?: string): Promise<FlowRun> {
    const run = `/runs/${encodeURIComponent(runId)}`;
    const path =
      stepId === undefined ? `${run}/retry` : `${run}/steps/${encodeURIComponent(stepId)}/retry`;
    return (await this.request('POST', path)).body as FlowRun;
  }

  /** POST /runs/{runId}/rerun: the NEW run. */
  async rerun(runId: string, fromStepId: string): Promise<FlowRun> {
    const path = `/runs/${encodeURIComponent(runId)}/rerun`;
    return (await this.request('POST', path, { fromStepId })).body as FlowRun;
  }

  /** POST /admin/replay: the preview (and, unless dryRun, the subscription is sought). */
  async replay(request: ReplayRequest): Promise<ReplayAnswer> {
    return (await this.request('POST', '/admin/replay', request)).body as ReplayAnswer;
  }

  /** POST /admin/snapshots. */
  async createSnapshot(subscription: string, name: string): Promise<unknown> {
    return (await this.request('POST', '/admin/snapshots', { subscription, name })).body;
  }

  async flows(): Promise<unknown> {
    return (await this.request('GET', '/flows')).body;
  }

  /** GET /reports: the request owner's report index entries, newest first. */
  async listReports(params: IndexListParams = {}): Promise<ReportPage> {
    return (await this.request('GET', `/reports${queryString(params)}`)).body as ReportPage;
  }

  async getReport(reportId: string): Promise<ReportIndexEntry> {
    return (await this.request('GET', `/reports/${encodeURIComponent(reportId)}`))
      .body as ReportIndexEntry;
  }

  /** GET /recommendations: the request owner's recommendation index entries, newest first. */
  async listRecommendations(params: IndexListParams = {}): Promise<RecommendationPage> {
    const path = `/recommendations${queryString(params)}`;
    return (await this.request('GET', path)).body as RecommendationPage;
  }

  async getRecommendation(recoId: string): Promise<RecommendationIndexEntry> {
    return (await this.request('GET', `/recommendations/${encodeURIComponent(recoId)}`))
      .body as RecommendationIndexEntry;
  }

  /** POST /admin/index/backfill: a dry run unless `apply`. */
  async backfillIndex(apply: boolean): Promise<IndexBackfillAnswer> {
    return (await this.request('POST', '/admin/index/backfill', { apply }))
      .body as IndexBackfillAnswer;
  }

  async createAccount(body: AccountCreateBody): Promise<Account> {
    return (await this.request('POST', '/accounts', body)).body as Account;
  }

  async listAccounts(params: { limit?: number; cursor?: string } = {}): Promise<AccountPage> {
    const query = new URLSearchParams();
    if (params.limit !== undefined) query.set('limit', String(params.limit));
    if (params.cursor !== undefined) query.set('cursor', params.cursor);
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return (await this.request('GET', `/accounts${suffix}`)).body as AccountPage;
  }

  /** The account and its ETag (the version a conditional PUT names in If-Match). */
  async getAccount(accountId: string): Promise<{ account: Account; etag: string | undefined }> {
    const path = `/accounts/${encodeURIComponent(accountId)}`;
    const { body, headers } = await this.request('GET', path);
    return { account: body as Account, etag: headers.get('etag') ?? undefined };
  }

  /** PUT: 409 CONFLICT when `etag` is given and the account changed since. */
  async replaceAccount(
    accountId: string,
    changes: AccountChangesBody,
    etag?: string,
  ): Promise<Account> {
    const path = `/accounts/${encodeURIComponent(accountId)}`;
    const ifMatch: Record<string, string> = etag === undefined ? {} : { 'if-match': etag };
    return (await this.request('PUT', path, changes, ifMatch)).body as Account;
  }

  async deleteAccount(accountId: string): Promise<void> {
    await this.request('DELETE', `/accounts/${encodeURIComponent(accountId)}`);
  }

  /** POST /schedules (flow 7): checked completely now (cron, time zone, flow, scope). */
  async createSchedule(body: FlowScheduleRequest): Promise<ScheduleView> {
    return (await this.request('POST', '/schedules', body)).body as ScheduleView;
  }

  async listSchedules(params: { limit?: number; cursor?: string } = {}): Promise<SchedulePage> {
    return (await this.request('GET', `/schedules${queryString(params)}`)).body as SchedulePage;
  }

  async getSchedule(scheduleId: string): Promise<ScheduleView> {
    return (await this.request('GET', `/schedules/${encodeURIComponent(scheduleId)}`))
      .body as ScheduleView;
  }

  /** POST /schedules/{scheduleId}/pause or /resume (already so: the schedule unchanged). */
  async setScheduleState(scheduleId: string, action: 'pause' | 'resume'): Promise<ScheduleView> {
    const path = `/schedules/${encodeURIComponent(scheduleId)}/${action}`;
    return (await this.request('POST', path)).body as ScheduleView;
  }

  async deleteSchedule(scheduleId: string): Promise<void> {
    await this.request('DELETE', `/schedules/${encodeURIComponent(scheduleId)}`);
  }

  /** Fire now (the current minute's slot) or a past slot (backfill): one run per slot. */
  async fireSchedule(scheduleId: string, slotAt?: string): Promise<ScheduleFireAnswer> {
    const path = `/schedules/${encodeURIComponent(scheduleId)}/fire`;
    return (await this.request('POST', path, slotAt === undefined ? {} : { slotAt }))
      .body as ScheduleFireAnswer;
  }

  /** POST /admin/schedules/tick (admin): fire every due slot now, as Cloud Scheduler does. */
  async tickSchedules(): Promise<unknown> {
    return (await this.request('POST', '/admin/schedules/tick', {})).body;
  }

  /** GET /signals: the request owner's signals, newest first. */
  async listSignals(params: IndexListParams = {}): Promise<SignalPage> {
    return (await this.request('GET', `/signals${queryString(params)}`)).body as SignalPage;
  }

  /** POST /backtests/jobs: 422 VALIDATION_FAILED lists every violation of the grid guards. */
  async createBacktestJob(body: BacktestJobRequest): Promise<BacktestJobCreated> {
    const { status, body: job } = await this.request('POST', '/backtests/jobs', body);
    return { job: job as BacktestJob, created: status === 201 };
  }

  async getBacktestJob(jobId: string): Promise<BacktestJob> {
    return (await this.request('GET', `/backtests/jobs/${encodeURIComponent(jobId)}`))
      .body as BacktestJob;
  }

  /** GET /backtests/jobs/{jobId}/top: the result, or the best so far while it runs. */
  async backtestTop(jobId: string, limit?: number): Promise<BacktestTop> {
    const path = `/backtests/jobs/${encodeURIComponent(jobId)}/top${queryString({ limit })}`;
    return (await this.request('GET', path)).body as BacktestTop;
  }

  async listBacktestJobs(params: IndexListParams = {}): Promise<BacktestJobPage> {
    return (await this.request('GET', `/backtests/jobs${queryString(params)}`))
      .body as BacktestJobPage;
  }

  /** POST /backtests/jobs/{jobId}/cancel (idempotent): a running job stops at a batch boundary. */
  async cancelBacktestJob(jobId: string): Promise<BacktestJob> {
    return (await this.request('POST', `/backtests/jobs/${encodeURIComponent(jobId)}/cancel`))
      .body as BacktestJob;
  }

  /** POST /evaluations/recommendations: 201 for a new one, 200 for a repeated key. */
  async createEvaluation(
    body: EvaluationRequest,
  ): Promise<{ evaluation: EvaluationView; created: boolean }> {
    const { status, body: view } = await this.request('POST', '/evaluations/recommendations', body);
    return { evaluation: view as EvaluationView, created: status === 201 };
  }

  /** GET /evaluations/{id}: the points, their scores and the table (scored when read). */
  async getEvaluation(evaluationId: string): Promise<EvaluationView> {
    return (await this.request('GET', `/evaluations/${encodeURIComponent(evaluationId)}`))
      .body as EvaluationView;
  }

  async listEvaluations(params: IndexListParams = {}): Promise<EvaluationPage> {
    return (await this.request('GET', `/evaluations${queryString(params)}`)).body as EvaluationPage;
  }

  /** POST /evaluations/{id}/cancel (idempotent): nothing more starts, the active runs stop. */
  async cancelEvaluation(evaluationId: string): Promise<EvaluationView> {
    return (await this.request('POST', `/evaluations/${encodeURIComponent(evaluationId)}/cancel`))
      .body as EvaluationView;
  }

  /**
   * GET <path> as text/event-stream (no request timeout: the stream lives until the server ends
   * it or `signal` aborts); an error answer throws ApiError like any other call.
   */
  async openEventStream(
    path: string,
    options: { lastEventId?: string; signal?: AbortSignal } = {},
  ): Promise<ReadableStream<Uint8Array>> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        headers: {
          ...this.authHeaders(),
          accept: 'text/event-stream',
          ...(options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId }),
        },
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiError(0, 'UPSTREAM_UNAVAILABLE', `cannot reach ${this.baseUrl}: ${reason}`);
    }
    const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (!response.ok || !isStream || response.body === null) {
      const parsed = (await response.json().catch(() => ({}))) as {
        code?: unknown;
        message?: unknown;
      };
      throw new ApiError(
        response.ok ? 502 : response.status,
        response.ok ? 'UPSTREAM_UNAVAILABLE' : parsed.code,
        typeof parsed.message === 'string' ? parsed.message : 'not an event stream',
      );
    }
    return response.body;
  }

  /** GET /me: who the configured credential is. */
  async whoami(): Promise<Principal> {
    return (await this.request('GET', '/me')).body as Principal;
  }

  /** POST /admin/tokens: the answer carries the token, once. */
  async createToken(body: ApiTokenRequest): Promise<ApiToken & { token: string }> {
    return (await this.request('POST', '/admin/tokens', body)).body as ApiToken & { token: string };
  }

  async listTokens(ownerId?: string): Promise<ApiToken[]> {
    const suffix = ownerId === undefined ? '' : `?ownerId=${encodeURIComponent(ownerId)}`;
    return ((await this.request('GET', `/admin/tokens${suffix}`)).body as { tokens: ApiToken[] })
      .tokens;
  }

  async revokeToken(tokenId: string): Promise<ApiToken> {
    return (await this.request('DELETE', `/admin/tokens/${encodeURIComponent(tokenId)}`))
      .body as ApiToken;
  }

  async putIdentity(email: string, body: UserIdentityRequest): Promise<UserIdentity> {
    return (await this.request('PUT', `/admin/identities/${encodeURIComponent(email)}`, body))
      .body as UserIdentity;
  }

  async listIdentities(): Promise<UserIdentity[]> {
    return ((await this.request('GET', '/admin/identities')).body as { identities: UserIdentity[] })
      .identities;
  }

  async deleteIdentity(email: string): Promise<void> {
    await this.request('DELETE', `/admin/identities/${encodeURIComponent(email)}`);
  }

  private authHeaders(): Record<string, string> {
    return {
      authorization: `Bearer ${this.options.token}`,
      ...(this.options.actingOwner === undefined
        ? {}
        : { 'x-tda-owner': this.options.actingOwner }),
      ...(this.options.identityToken === undefined
        ? {}
        : { 'x-serverless-authorization': `Bearer ${this.options.identityToken}` }),
    };
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown; headers: Headers }> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers: {
          ...this.authHeaders(),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extraHeaders,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiError(0, 'UPSTREAM_UNAVAILABLE', `cannot reach ${this.baseUrl}: ${reason}`);
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!response.ok) {
      const err = (parsed ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
      throw new ApiError(
        response.status,
        err.code,
        typeof err.message === 'string' ? err.message : `HTTP ${response.status}`,
        err.details,
      );
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }
}
