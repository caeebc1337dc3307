import { ApiError } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { LlmCallError } from '../llm-client.port';
import {
  mapGeminiError,
  mapGeminiHttpError,
  summarizeGoogleError,
  type GeminiCallContext,
} from './gemini-error.mapper';

const context: GeminiCallContext = { provider: 'gemini', model: 'gemini-test' };

function apiError(status: number, body: unknown): ApiError {
  return new ApiError({ status, message: JSON.stringify(body) });
}

function googleError(code: number, status: string, message: string, reason?: string): unknown {
  return {
    error: {
      code,
      status,
      message,
      ...(reason !== undefined ? { details: [{ '@type': 'x', reason }] } : {}),
    },
  };
}

describe('summarizeGoogleError', () => {
  it('keeps the status and ErrorInfo reason tokens only', () => {
    const summary = summarizeGoogleError(
      JSON.stringify(googleError(400, 'INVALID_ARGUMENT', 'secret prompt text', 'API_KEY_INVALID')),
    );
    expect(summary).toEqual({ providerStatus: 'INVALID_ARGUMENT', reason: 'API_KEY_INVALID' });
  });

  it('ignores non-token values and non-JSON messages', () => {
    expect(
      summarizeGoogleError(JSON.stringify({ error: { status: 'not a token', details: [{}] } })),
    ).toEqual({});
    expect(summarizeGoogleError('<html>bad gateway</html>')).toEqual({});
  });
});

describe('mapGeminiHttpError', () => {
  const cases: [number, string | undefined, string | undefined, string, boolean][] = [
    [429, 'RESOURCE_EXHAUSTED', undefined, 'LLM_UNAVAILABLE', true],
    [500, 'INTERNAL', undefined, 'LLM_UNAVAILABLE', true],
    [502, undefined, undefined, 'LLM_UNAVAILABLE', true],
    [503, 'UNAVAILABLE', undefined, 'LLM_UNAVAILABLE', true],
    [504, 'DEADLINE_EXCEEDED', undefined, 'LLM_UNAVAILABLE', true],
    [408, undefined, undefined, 'LLM_UNAVAILABLE', true],
    [400, 'INVALID_ARGUMENT', undefined, 'LLM_PROFILE_INVALID', false],
    [404, 'NOT_FOUND', undefined, 'LLM_PROFILE_INVALID', false],
    [413, undefined, undefined, 'LLM_PROFILE_INVALID', false],
    [400, 'INVALID_ARGUMENT', 'API_KEY_INVALID', 'LLM_UNAVAILABLE', false],
    [400, 'FAILED_PRECONDITION', undefined, 'LLM_UNAVAILABLE', false],
    [401, 'UNAUTHENTICATED', undefined, 'LLM_UNAVAILABLE', false],
    [403, 'PERMISSION_DENIED', undefined, 'LLM_UNAVAILABLE', false],
    [418, undefined, undefined, 'LLM_UNAVAILABLE', false],
  ];

  it.each(cases)(
    'HTTP %i %s %s → %s retryable=%s',
    (status, providerStatus, reason, code, retryable) => {
      const error = mapGeminiHttpError(
        status,
        {
          ...(providerStatus !== undefined ? { providerStatus } : {}),
          ...(reason !== undefined ? { reason } : {}),
        },
        context,
      );
      expect(error).toBeInstanceOf(LlmCallError);
      expect(error.code).toBe(code);
      expect(error.retryable).toBe(retryable);
      expect(error.details).toMatchObject({ status, provider: 'gemini', model: 'gemini-test' });
      expect(error.message).toContain(`HTTP ${status}`);
    },
  );

  it('names the credentials on 401/403 without showing them', () => {
    const gemini = mapGeminiHttpError(403, {}, context);
    expect(gemini.message).toMatch(/GEMINI_API_KEY/);
    const vertex = mapGeminiHttpError(401, {}, { provider: 'vertex', model: 'm' });
    expect(vertex.message).toMatch(/Vertex AI credentials/);
  });
});

describe('mapGeminiError', () => {
  const key = 'AIzaSy-the-secret-key-0123456789';

  it('maps an SDK ApiError and drops the provider message text', () => {
    const error = mapGeminiError(
      apiError(400, googleError(400, 'INVALID_ARGUMENT', `bad schema near "${key}" and prompt`)),
      context,
    );
    expect(error.code).toBe('LLM_PROFILE_INVALID');
    expect(error.message).toBe(
      'gemini generateContent failed: HTTP 400 INVALID_ARGUMENT: the provider rejected the request (model, generation config or response schema)',
    );
    expect(JSON.stringify(error.details)).not.toContain(key);
    expect(error.message).not.toContain('prompt');
  });

  it('maps network failures (fetch TypeError with a cause code) to retryable LLM_UNAVAILABLE', () => {
    const cause = Object.assign(new Error(`connect ECONNREFUSED with ${key}`), {
      code: 'ECONNREFUSED',
    });
    const error = mapGeminiError(new TypeError('fetch failed', { cause }), context);
    expect(error.code).toBe('LLM_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ network: 'ECONNREFUSED' });
    expect(error.message).not.toContain(key);
  });

  it('maps missing ADC to non-retryable LLM_UNAVAILABLE', () => {
    const error = mapGeminiError(
      new Error('Could not load the default credentials. Browse to https://...'),
      { provider: 'vertex', model: 'm' },
    );
    expect(error.code).toBe('LLM_UNAVAILABLE');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({ reason: 'ADC_NOT_FOUND' });
  });

  it('maps anything else to retryable LLM_UNAVAILABLE naming only the error class', () => {
    const error = mapGeminiError(new SyntaxError(`Unexpected token in ${key}`), context);
    expect(error.code).toBe('LLM_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('gemini generateContent failed: unexpected SyntaxError');
    expect(mapGeminiError('a string', context).message).toBe(
      'gemini generateContent failed: unexpected error',
    );
  });

  it('passes an LlmCallError through', () => {
    const original = new LlmCallError('LLM_TIMEOUT', 'x', true);
    expect(mapGeminiError(original, context)).toBe(original);
  });
});
