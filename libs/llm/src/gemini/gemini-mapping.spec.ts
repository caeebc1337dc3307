import { GenerateContentResponse } from '@google/genai';
import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../llm-client.port';
import { toGenerateContentParameters } from './gemini-request.mapper';
import { fromGenerateContentResponse } from './gemini-response.mapper';

function sdkResponse(body: Record<string, unknown>): GenerateContentResponse {
  return Object.assign(new GenerateContentResponse(), body);
}

const baseRequest: LlmRequest = {
  model: 'gemini-test',
  systemInstruction: 'You are an analyst.',
  contents: [{ text: 'Analyse.' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } }],
  generationConfig: { responseMimeType: 'application/json' },
  deadlineMs: 1000,
  attempt: 1,
};

const controls = { abortSignal: new AbortController().signal, timeoutMs: 1000 };

describe('toGenerateContentParameters', () => {
  it('adds no generation field the profile does not set', () => {
    const params = toGenerateContentParameters(baseRequest, controls);
    const { abortSignal, httpOptions, automaticContinuation, systemInstruction, ...generation } =
      params.config ?? {};
    expect(generation).toEqual({ responseMimeType: 'application/json' });
    expect(abortSignal).toBe(controls.abortSignal);
    expect(httpOptions).toEqual({ timeout: 1000 });
    expect(httpOptions?.retryOptions).toBeUndefined();
    expect(automaticContinuation).toBe(false);
    expect(systemInstruction).toEqual({ parts: [{ text: 'You are an analyst.' }] });
    expect(params.contents).toEqual([
      {
        role: 'user',
        parts: [{ text: 'Analyse.' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } }],
      },
    ]);
  });

  it('copies every profile field verbatim, thinkingLevel included', () => {
    const schema = { type: 'object', required: ['summary'] };
    const params = toGenerateContentParameters(
      {
        ...baseRequest,
        systemInstruction: '',
        generationConfig: {
          responseMimeType: 'application/json',
          temperature: 0,
          topP: 0.9,
          topK: 40,
          maxOutputTokens: 2048,
          stopSequences: ['END'],
          candidateCount: 1,
          responseJsonSchema: schema,
          thinkingConfig: { includeThoughts: true, thinkingLevel: 'low', thinkingBudget: 512 },
        },
      },
      controls,
    );
    expect(params.config).toMatchObject({
      temperature: 0,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 2048,
      stopSequences: ['END'],
      candidateCount: 1,
      responseJsonSchema: schema,
      thinkingConfig: { includeThoughts: true, thinkingLevel: 'low', thinkingBudget: 512 },
    });
    expect(params.config?.systemInstruction).toBeUndefined();
  });
});

describe('fromGenerateContentResponse', () => {
  it('maps candidates, parts with the thought flag, usage, ids and the SDK text', () => {
    const response = fromGenerateContentResponse(
      sdkResponse({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ text: 'thinking…', thought: true }, { text: '{"a":' }, { text: '1}' }],
            },
            finishReason: 'STOP',
            safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
          },
        ],
        usageMetadata: {
          promptTokenCount: 3,
          candidatesTokenCount: 2,
          totalTokenCount: 9,
          thoughtsTokenCount: 4,
          cachedContentTokenCount: 1,
        },
        modelVersion: 'gemini-test-001',
        responseId: 'resp-1',
      }),
    );
    expect(response).toEqual({
      candidates: [
        {
          finishReason: 'STOP',
          parts: [{ text: 'thinking…', thought: true }, { text: '{"a":' }, { text: '1}' }],
          safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
        },
      ],
      text: '{"a":1}',
      usageMetadata: {
        promptTokenCount: 3,
        candidatesTokenCount: 2,
        totalTokenCount: 9,
        thoughtsTokenCount: 4,
      },
      modelVersion: 'gemini-test-001',
      responseId: 'resp-1',
    });
  });

  it('tolerates malformed shapes without throwing', () => {
    const response = fromGenerateContentResponse(
      sdkResponse({
        candidates: [null, { content: { parts: 'nope' } }, { content: { parts: [7, {}] } }],
        usageMetadata: { totalTokenCount: 'many' },
        promptFeedback: { blockReason: 42 },
      }),
    );
    expect(response.candidates).toEqual([{ parts: [] }, { parts: [] }, { parts: [{}, {}] }]);
    expect(response.usageMetadata).toBeUndefined();
    expect(response.promptFeedback).toEqual({});
    expect(response.text).toBeUndefined();
  });

  it('surfaces promptFeedback.blockReason and an empty candidate list', () => {
    const response = fromGenerateContentResponse(
      sdkResponse({ promptFeedback: { blockReason: 'SAFETY' } }),
    );
    expect(response).toEqual({ candidates: [], promptFeedback: { blockReason: 'SAFETY' } });
  });
});
