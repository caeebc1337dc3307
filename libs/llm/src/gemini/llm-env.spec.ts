import { ConfigError, loadConfig } from '@tda/config';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GeminiLlmClient } from './gemini-llm.client';
import { createLlmClientFromConfig, llmEnv } from './llm-env';

const schema = z.object(llmEnv);
const KEY = 'AIzaSy-unit-test-secret-key';

describe('llmEnv', () => {
  it('parses the LLM variables with an empty key meaning unset', () => {
    expect(loadConfig('t', schema, {})).toEqual({});
    expect(loadConfig('t', schema, { GEMINI_API_KEY: '  ' }).GEMINI_API_KEY).toBeUndefined();
    expect(
      loadConfig('t', schema, {
        GEMINI_API_KEY: KEY,
        GOOGLE_GENAI_USE_VERTEXAI: 'true',
        GOOGLE_CLOUD_LOCATION: 'europe-west4',
        TDA_GEMINI_BASE_URL: 'http://127.0.0.1:9000',
      }),
    ).toEqual({
      GEMINI_API_KEY: KEY,
      GOOGLE_GENAI_USE_VERTEXAI: true,
      GOOGLE_CLOUD_LOCATION: 'europe-west4',
      TDA_GEMINI_BASE_URL: 'http://127.0.0.1:9000',
    });
    expect(loadConfig('t', schema, { GOOGLE_GENAI_USE_VERTEXAI: 'false' })).toEqual({
      GOOGLE_GENAI_USE_VERTEXAI: false,
    });
  });

  it('rejects bad values without echoing them', () => {
    expect(() => loadConfig('t', schema, { TDA_GEMINI_BASE_URL: 'ftp://host' })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig('t', schema, { GOOGLE_GENAI_USE_VERTEXAI: 'maybe' })).toThrow(
      /GOOGLE_GENAI_USE_VERTEXAI/,
    );
    expect(() => loadConfig('t', schema, { GOOGLE_CLOUD_LOCATION: 'Europe West' })).toThrow(
      /GOOGLE_CLOUD_LOCATION/,
    );
  });
});

describe('createLlmClientFromConfig', () => {
  it('returns null without credentials (offline analyst)', () => {
    expect(createLlmClientFromConfig({})).toBeNull();
    expect(createLlmClientFromConfig({ GEMINI_API_KEY: '' })).toBeNull();
    expect(
      createLlmClientFromConfig({ GOOGLE_GENAI_USE_VERTEXAI: false, GOOGLE_CLOUD_PROJECT: 'p' }),
    ).toBeNull();
  });

  it('builds the Gemini API client from a key', () => {
    const client = createLlmClientFromConfig({ GEMINI_API_KEY: KEY });
    expect(client).toBeInstanceOf(GeminiLlmClient);
    expect(client?.provider).toBe('gemini');
    // The key is held in a private field: serialising or inspecting the client does not show it.
    expect(JSON.stringify(client)).not.toContain(KEY);
    expect(Object.values(client ?? {}).join(' ')).not.toContain(KEY);
  });

  it('prefers Vertex AI when GOOGLE_GENAI_USE_VERTEXAI=true', () => {
    const client = createLlmClientFromConfig({
      GEMINI_API_KEY: KEY,
      GOOGLE_GENAI_USE_VERTEXAI: true,
      GOOGLE_CLOUD_PROJECT: 'tda-prod',
    });
    expect(client?.provider).toBe('vertex');
  });

  it('fails fast when Vertex AI has no project', () => {
    expect(() => createLlmClientFromConfig({ GOOGLE_GENAI_USE_VERTEXAI: true })).toThrow(
      /GOOGLE_CLOUD_PROJECT: is required when GOOGLE_GENAI_USE_VERTEXAI=true/,
    );
  });

  it('validates the client options', () => {
    expect(() => new GeminiLlmClient({ apiKey: ' ' })).toThrow(ConfigError);
    expect(() => new GeminiLlmClient({ apiKey: KEY, baseUrl: 'not a url' })).toThrow(/baseUrl/);
    expect(
      () => new GeminiLlmClient({ vertexai: { project: 'p', location: 'Bad Location' } }),
    ).toThrow(/location/);
  });
});
