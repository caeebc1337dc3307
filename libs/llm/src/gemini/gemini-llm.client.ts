import { GoogleGenAI, type GoogleGenAIOptions } from '@google/genai';
import { ConfigError } from '@tda/config';
import {
  LlmCallError,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
} from '../llm-client.port';
import { mapGeminiError, type GeminiCallContext } from './gemini-error.mapper';
import { toGenerateContentParameters } from './gemini-request.mapper';
import { fromGenerateContentResponse } from './gemini-response.mapper';

export type GoogleAuthOptions = NonNullable<GoogleGenAIOptions['googleAuthOptions']>;

interface GeminiEndpointOptions {
  /** Overrides the endpoint, e.g. a local fake server in tests or an egress proxy. */
  baseUrl?: string;
  /** Default: v1beta (Gemini API) / v1beta1 (Vertex AI) — where responseJsonSchema and thinkingConfig live. */
  apiVersion?: string;
}

/** Gemini API (generativelanguage.googleapis.com) with an API key. */
export interface GeminiApiKeyOptions extends GeminiEndpointOptions {
  apiKey: string;
}

/** Vertex AI with Application Default Credentials (or explicit googleAuthOptions). */
export interface GeminiVertexOptions extends GeminiEndpointOptions {
  vertexai: { project: string; location: string };
  /** Passed to google-auth-library; default ADC with the cloud-platform scope. */
  googleAuthOptions?: GoogleAuthOptions;
}

export type GeminiLlmClientOptions = GeminiApiKeyOptions | GeminiVertexOptions;

export const GEMINI_API_BASE_URL = 'https://generativelanguage.googleapis.com/';
export const GEMINI_DEFAULT_API_VERSION = 'v1beta';
export const VERTEX_DEFAULT_API_VERSION = 'v1beta1';

/** The SDK's own choice of Vertex endpoint, made explicit so no environment variable can move it. */
export function vertexBaseUrl(location: string): string {
  if (location === 'global') return 'https://aiplatform.googleapis.com/';
  if (location === 'us' || location === 'eu')
    return `https://aiplatform.${location}.rep.googleapis.com/`;
  return `https://${location}-aiplatform.googleapis.com/`;
}

const LOCATION = /^[a-z][a-z0-9-]{0,62}$/;

function configError(problem: string): ConfigError {
  return new ConfigError('llm', [problem]);
}

function checkBaseUrl(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw configError('baseUrl: must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError('baseUrl: must be an absolute http(s) URL');
  }
}

/**
 * Every value the SDK would otherwise take from the process environment (API key, project,
 * location, base URL, API version, Vertex flag) is passed explicitly, so the typed config is the
 * only source (DESIGN.md §7: only libs/config reads the environment).
 */
function sdkOptions(options: GeminiLlmClientOptions): GoogleGenAIOptions {
  if (options.baseUrl !== undefined) checkBaseUrl(options.baseUrl);
  if ('apiKey' in options) {
    if (options.apiKey.trim() === '') throw configError('apiKey: must not be empty');
    return {
      vertexai: false,
      apiKey: options.apiKey,
      apiVersion: options.apiVersion ?? GEMINI_DEFAULT_API_VERSION,
      httpOptions: { baseUrl: options.baseUrl ?? GEMINI_API_BASE_URL },
    };
  }
  const { project, location } = options.vertexai;
  if (project.trim() === '') throw configError('vertexai.project: must not be empty');
  if (!LOCATION.test(location)) throw configError('vertexai.location: must be a location id');
  return {
    vertexai: true,
    project,
    location,
    apiVersion: options.apiVersion ?? VERTEX_DEFAULT_API_VERSION,
    httpOptions: { baseUrl: options.baseUrl ?? vertexBaseUrl(location) },
    // The project is known: without it google-auth-library probes gcloud and the metadata server
    // to find one on the first call.
    googleAuthOptions: { projectId: project, ...options.googleAuthOptions },
  };
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function isAbortError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const name = (error as { name?: unknown }).name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/**
 * LlmClient on @google/genai's models.generateContent (Gemini API key or Vertex AI). One
 * generate() is exactly one HTTP call: the SDK's retries and automatic continuation are off,
 * because the retry policy belongs to the pipeline's budget (seed 004). The deadline is enforced
 * here (abort signal + SDK timeout + a race, so even a hung credential lookup cannot outlive it).
 * Errors are LlmCallErrors whose messages carry only the status and reason tokens (README).
 */
export class GeminiLlmClient implements LlmClient {
  readonly provider: 'gemini' | 'vertex';
  // A private field: the SDK instance holds the credentials, and a logged or serialised client
  // must not expose them.
  readonly #ai: GoogleGenAI;

  constructor(options: GeminiLlmClientOptions) {
    this.provider = 'apiKey' in options ? 'gemini' : 'vertex';
    this.#ai = new GoogleGenAI(sdkOptions(options));
  }

  async generate(request: LlmRequest): Promise<LlmResponse> {
    const context: GeminiCallContext = { provider: this.provider, model: request.model };
    const callerSignal = request.signal;
    if (callerSignal?.aborted === true) throw this.aborted(context);
    const deadlineMs = request.deadlineMs;
    if (!Number.isFinite(deadlineMs) || deadlineMs <= 0) {
      throw this.timedOut(context, deadlineMs, 0);
    }
    const timeoutMs = Math.ceil(deadlineMs);
    const startedAt = performance.now();
    const controller = new AbortController();
    let expired = false;
    const stopped = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(new Error('stopped')), {
        once: true,
      });
    });
    // Rejects on every deadline/abort, also after the call has settled: never unhandled.
    stopped.catch(() => undefined);
    const timer = setTimeout(() => {
      expired = true;
      controller.abort();
    }, timeoutMs);
    const onCallerAbort = (): void => controller.abort();
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const call = this.#ai.models.generateContent(
        toGenerateContentParameters(request, { abortSignal: controller.signal, timeoutMs }),
      );
      // When the deadline wins the race the SDK still rejects later (aborted fetch): expected.
      call.catch(() => undefined);
      const response = await Promise.race([call, stopped]);
      return fromGenerateContentResponse(response);
    } catch (error) {
      const elapsedMs = Math.round(performance.now() - startedAt);
      if (expired) throw this.timedOut(context, deadlineMs, elapsedMs);
      // (re-read: TypeScript narrowed `aborted` to false at the top, but it may have fired since)
      if (isAborted(callerSignal)) throw this.aborted(context);
      // The SDK's own timer (same deadline) can fire a hair before ours.
      if (isAbortError(error)) throw this.timedOut(context, deadlineMs, elapsedMs);
      throw mapGeminiError(error, context);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private timedOut(
    context: GeminiCallContext,
    deadlineMs: number,
    elapsedMs: number,
  ): LlmCallError {
    return new LlmCallError(
      'LLM_TIMEOUT',
      `${context.provider} generateContent exceeded its deadline of ${deadlineMs} ms`,
      true,
      { provider: context.provider, model: context.model, deadlineMs, elapsedMs },
    );
  }

  /**
   * The caller's signal fired (cancel, lease loss, step budget): reported as LLM_TIMEOUT with
   * `aborted: true` — the caller knows why it aborted and usually ignores the result anyway.
   */
  private aborted(context: GeminiCallContext): LlmCallError {
    return new LlmCallError(
      'LLM_TIMEOUT',
      `${context.provider} generateContent aborted by the caller`,
      true,
      { provider: context.provider, model: context.model, aborted: true },
    );
  }
}
