import { GoogleAuth } from 'google-auth-library';
import { InfraError } from '../infra.errors';

/**
 * The one I/O port of the GCP resource reconcilers: a JSON REST call against a Google API
 * (`https://<service>.googleapis.com/...`). The Google implementation authenticates with
 * Application Default Credentials; tests use FakeGcpApi (libs/infra/src/testing), in process or
 * over HTTP, through the same interface.
 */
export interface GcpRestRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Absolute URL on a googleapis.com host. */
  url: string;
  /** Query parameters (e.g. updateMask). */
  params?: Record<string, string>;
  body?: unknown;
}

export interface GcpRestResponse<T = unknown> {
  status: number;
  data: T;
}

export interface GcpRestClient {
  /** Resolves for 2xx and 404 (callers branch on `status`); rejects with GcpApiError otherwise. */
  request<T = unknown>(request: GcpRestRequest): Promise<GcpRestResponse<T>>;
}

/** A non-2xx, non-404 answer of a Google API, with the API's own status text (no credentials). */
export class GcpApiError extends InfraError {
  constructor(
    readonly status: number,
    readonly request: Pick<GcpRestRequest, 'method' | 'url'>,
    apiMessage: string,
  ) {
    super(`${request.method} ${request.url} failed with HTTP ${status}: ${apiMessage}`, {
      details: { status, method: request.method, url: request.url },
      code: status === 403 || status === 401 ? 'UNAUTHENTICATED' : 'UPSTREAM_UNAVAILABLE',
    });
  }
}

function apiMessageOf(data: unknown): string {
  const error = (data as { error?: { message?: unknown; status?: unknown } } | null)?.error;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  return typeof error?.status === 'string' ? `${error.status}: ${message}` : message;
}

export interface GoogleRestClientOptions {
  /**
   * Rewrites `https://<service>.googleapis.com` to `<base>/<service>` (a local fake API in tests,
   * a private endpoint). Unset: the real hosts.
   */
  endpointOverride?: string;
  auth?: GoogleAuth;
}

/** GcpRestClient over google-auth-library (ADC: gcloud auth application-default login, or a metadata server). */
export class GoogleRestClient implements GcpRestClient {
  private readonly auth: GoogleAuth;

  constructor(private readonly options: GoogleRestClientOptions = {}) {
    this.auth =
      options.auth ??
      new GoogleAuth({ scopes: ['https://www.googleapis.com/auth/cloud-platform'] });
  }

  async request<T = unknown>(request: GcpRestRequest): Promise<GcpRestResponse<T>> {
    const url = this.rewrite(request.url);
    const response = await this.auth.request<T>({
      url,
      method: request.method,
      ...(request.params === undefined ? {} : { params: request.params }),
      ...(request.body === undefined ? {} : { data: request.body }),
      // Status handling is ours: 404 is an answer ("does not exist"), not an exception.
      validateStatus: () => true,
      responseType: 'json',
    });
    if ((response.status >= 200 && response.status < 300) || response.status === 404) {
      return { status: response.status, data: response.data };
    }
    throw new GcpApiError(response.status, request, apiMessageOf(response.data));
  }

  private rewrite(url: string): string {
    const base = this.options.endpointOverride;
    if (base === undefined) return url;
    const match = /^https:\/\/([a-z0-9-]+)\.googleapis\.com(\/.*)$/.exec(url);
    if (match === null) return url;
    return `${base.replace(/\/$/, '')}/${match[1] ?? ''}${match[2] ?? ''}`;
  }
}
