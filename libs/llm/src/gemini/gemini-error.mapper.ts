import { ApiError } from '@google/genai';
import { LlmCallError, type LlmProvider } from '../llm-client.port';

/** What the error messages may name: the backend and the model, never request or response text. */
export interface GeminiCallContext {
  provider: Extract<LlmProvider, 'gemini' | 'vertex'>;
  model: string;
}

/**
 * The parts of a Google API error body (`{"error":{"code","message","status","details"}}`) that are
 * safe to surface: the canonical status token (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) and the
 * google.rpc.ErrorInfo reason (API_KEY_INVALID, ...). The free-text `message` is dropped on purpose:
 * the provider may echo parts of the request in it.
 */
export interface GoogleErrorSummary {
  providerStatus?: string;
  reason?: string;
}

/** Enum-like tokens only; anything else is not copied into messages or details. */
const TOKEN = /^[A-Z][A-Z0-9_]{0,63}$/;

const CREDENTIAL_REASONS = new Set([
  'API_KEY_INVALID',
  'API_KEY_EXPIRED',
  'API_KEY_SERVICE_BLOCKED',
  'API_KEY_HTTP_REFERRER_BLOCKED',
  'API_KEY_IP_ADDRESS_BLOCKED',
  'ACCESS_TOKEN_EXPIRED',
  'ACCESS_TOKEN_TYPE_UNSUPPORTED',
  'CREDENTIALS_MISSING',
  'SERVICE_DISABLED',
  'CONSUMER_INVALID',
]);

/** Node/undici error codes of a request that never got an HTTP answer. */
const NETWORK_CODE = /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/;

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function token(value: unknown): string | undefined {
  return typeof value === 'string' && TOKEN.test(value) ? value : undefined;
}

/**
 * The SDK's ApiError carries the whole error body as its message (JSON.stringify of the body, or
 * of `{error:{message:<text body>,...}}` for a non-JSON answer). Extract the status and reason
 * tokens from it and nothing else.
 */
export function summarizeGoogleError(message: string): GoogleErrorSummary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return {};
  }
  const error = asRecord(asRecord(parsed)?.['error']);
  if (error === undefined) return {};
  const summary: GoogleErrorSummary = {};
  const providerStatus = token(error['status']);
  if (providerStatus !== undefined) summary.providerStatus = providerStatus;
  const details = error['details'];
  if (Array.isArray(details)) {
    for (const detail of details) {
      const reason = token(asRecord(detail)?.['reason']);
      if (reason !== undefined) {
        summary.reason = reason;
        break;
      }
    }
  }
  return summary;
}

function isCredentialProblem(status: number, summary: GoogleErrorSummary): boolean {
  if (status === 401 || status === 403) return true;
  // The Gemini API answers a wrong key with 400 INVALID_ARGUMENT + reason API_KEY_INVALID.
  return summary.reason !== undefined && CREDENTIAL_REASONS.has(summary.reason);
}

function describe(status: number, summary: GoogleErrorSummary): string {
  return [`HTTP ${status}`, summary.providerStatus, summary.reason]
    .filter((part) => part !== undefined)
    .join(' ');
}

/**
 * Maps an HTTP error answer of generateContent to an LlmCallError (README: error mapping):
 * - 401/403 and credential reasons (400 API_KEY_INVALID, ...) → LLM_UNAVAILABLE, not retryable:
 *   misconfigured credentials do not heal by retrying;
 * - 400 FAILED_PRECONDITION (region not supported, billing off) → LLM_UNAVAILABLE, not retryable;
 * - 400 (INVALID_ARGUMENT: unsupported schema, parameter or thinking config), 404 (unknown model),
 *   413 (request too large) → LLM_PROFILE_INVALID, not retryable: the same request fails again;
 * - 408, 409, 429, 499 and every 5xx → LLM_UNAVAILABLE, retryable (the pipeline's budget decides);
 * - any other 4xx → LLM_UNAVAILABLE, not retryable.
 */
export function mapGeminiHttpError(
  status: number,
  summary: GoogleErrorSummary,
  context: GeminiCallContext,
): LlmCallError {
  const what = describe(status, summary);
  const details: Record<string, unknown> = {
    provider: context.provider,
    model: context.model,
    status,
    ...(summary.providerStatus !== undefined ? { providerStatus: summary.providerStatus } : {}),
    ...(summary.reason !== undefined ? { reason: summary.reason } : {}),
  };
  const prefix = `${context.provider} generateContent failed: ${what}`;
  if (isCredentialProblem(status, summary)) {
    const credentials =
      context.provider === 'vertex'
        ? 'the Vertex AI credentials (ADC service account) are missing or not allowed to call the model'
        : 'the Gemini API key (GEMINI_API_KEY) is missing, invalid or not allowed to call the model';
    return new LlmCallError('LLM_UNAVAILABLE', `${prefix}: ${credentials}`, false, details);
  }
  if (status === 400 && summary.providerStatus === 'FAILED_PRECONDITION') {
    return new LlmCallError(
      'LLM_UNAVAILABLE',
      `${prefix}: the API is not usable from this project or location`,
      false,
      details,
    );
  }
  if (status === 400 || status === 404 || status === 413) {
    const why =
      status === 404
        ? `model ${context.model} not found for this API version`
        : status === 413
          ? 'request too large'
          : 'the provider rejected the request (model, generation config or response schema)';
    return new LlmCallError('LLM_PROFILE_INVALID', `${prefix}: ${why}`, false, details);
  }
  if (status === 408 || status === 409 || status === 429 || status === 499 || status >= 500) {
    const why = status === 429 ? 'rate limited or quota exhausted' : 'provider unavailable';
    return new LlmCallError('LLM_UNAVAILABLE', `${prefix}: ${why}`, true, details);
  }
  return new LlmCallError('LLM_UNAVAILABLE', `${prefix}: request rejected`, false, details);
}

function errorCode(error: unknown): string | undefined {
  const code = asRecord(error)?.['code'];
  return typeof code === 'string' && NETWORK_CODE.test(code) ? code : undefined;
}

/** The first Node/undici network code in the cause chain (fetch wraps them: TypeError → cause). */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const code = errorCode(current);
    if (code !== undefined) return code;
    current = asRecord(current)?.['cause'];
  }
  return undefined;
}

/**
 * Maps anything generateContent threw (other than our own deadline/abort, which the client
 * classifies first) to an LlmCallError. Only tokens (HTTP status, Google status/reason, network
 * error code, error class name) reach the message and details, never the original message.
 */
export function mapGeminiError(error: unknown, context: GeminiCallContext): LlmCallError {
  if (error instanceof LlmCallError) return error;
  if (error instanceof ApiError) {
    return mapGeminiHttpError(error.status, summarizeGoogleError(error.message), context);
  }
  const base = { provider: context.provider, model: context.model };
  const message = error instanceof Error ? error.message : '';
  if (/could not load the default credentials/i.test(message)) {
    return new LlmCallError(
      'LLM_UNAVAILABLE',
      `${context.provider} generateContent failed: Application Default Credentials not found`,
      false,
      { ...base, reason: 'ADC_NOT_FOUND' },
    );
  }
  const code = networkCode(error);
  if (code !== undefined || (error instanceof TypeError && message === 'fetch failed')) {
    return new LlmCallError(
      'LLM_UNAVAILABLE',
      `${context.provider} generateContent failed: network error${code !== undefined ? ` ${code}` : ''}`,
      true,
      { ...base, network: code ?? 'fetch failed' },
    );
  }
  // Unknown failures (an unparseable 200 body, an SDK error): retryable, the pipeline's budget
  // bounds the retries. The error class name is the only thing copied.
  const name =
    error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name)
      ? error.name
      : 'error';
  return new LlmCallError(
    'LLM_UNAVAILABLE',
    `${context.provider} generateContent failed: unexpected ${name}`,
    true,
    { ...base, error: name },
  );
}
