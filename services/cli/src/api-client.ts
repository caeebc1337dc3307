import {
  ERROR_CODES,
  TdaError,
  type ErrorCode,
  type FlowRun,
  type TriggerRequest,
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

export interface ApiClientOptions {
  baseUrl: string;
  token: string;
  /** Sent as X-Serverless-Authorization (Cloud Run IAM) when set. */
  identityToken?: string;
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

  async listRuns(params: ListRunsParams = {}): Promise<RunPage> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) query.set(key, String(value));
    }
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return (await this.request('GET', `/runs${suffix}`)).body as RunPage;
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

  private async request(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.options.token}`,
          ...(this.options.identityToken === undefined
            ? {}
            : { 'x-serverless-authorization': `Bearer ${this.options.identityToken}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
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
    return { status: response.status, body: parsed };
  }
}
