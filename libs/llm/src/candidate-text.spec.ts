import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { classifyGeneration, extractCandidateText } from './candidate-text';
import { emptyResponse, partsResponse, textResponse } from './testing';

describe('extractCandidateText', () => {
  it('concatenates candidates[0] text parts in order, skipping thought parts, without trimming', () => {
    const response = partsResponse([
      { text: 'thinking...', thought: true },
      { text: '  {"a":' },
      { text: '1}\n' },
    ]);
    const result = extractCandidateText(response);
    expect(result.text).toBe('  {"a":1}\n');
    expect(result.source).toBe('parts');
    expect(result.textBytes).toBe(10);
    expect(result.textSha256).toBe(createHash('sha256').update('  {"a":1}\n').digest('hex'));
  });

  it('keeps code fences as they are (no unwrapping)', () => {
    expect(extractCandidateText(textResponse('```json\n{}\n```')).text).toBe('```json\n{}\n```');
  });

  it('uses only the first candidate', () => {
    const response = textResponse('first');
    response.candidates.push({ parts: [{ text: 'second' }] });
    expect(extractCandidateText(response).text).toBe('first');
  });

  it('falls back to response.text when there are no text parts', () => {
    expect(
      extractCandidateText(
        partsResponse([{ thought: true, text: 't' }], { responseText: '{"b":2}' }),
      ),
    ).toMatchObject({
      text: '{"b":2}',
      source: 'response_text',
    });
    expect(extractCandidateText(emptyResponse({ responseText: 'x' })).source).toBe('response_text');
  });

  it('gives empty text with source none when nothing is there; byte length counts UTF-8', () => {
    expect(extractCandidateText(emptyResponse())).toMatchObject({
      text: '',
      source: 'none',
      textBytes: 0,
    });
    expect(extractCandidateText(textResponse('é')).textBytes).toBe(2);
  });
});

describe('classifyGeneration', () => {
  it('maps STOP and a missing reason to complete', () => {
    expect(classifyGeneration(textResponse('{}'))).toEqual({ kind: 'complete' });
    expect(classifyGeneration(partsResponse([], { finishReason: '' }))).toEqual({
      kind: 'complete',
    });
  });

  it('maps SAFETY-like reasons and a prompt blockReason to blocked', () => {
    for (const reason of ['SAFETY', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY']) {
      expect(classifyGeneration(textResponse('', { finishReason: reason }))).toEqual({
        kind: 'blocked',
        source: 'candidate',
        finishReason: reason,
      });
    }
    expect(classifyGeneration(emptyResponse({ blockReason: 'OTHER' }))).toEqual({
      kind: 'blocked',
      source: 'prompt',
      blockReason: 'OTHER',
    });
  });

  it('maps MAX_TOKENS and other reasons to incomplete', () => {
    for (const reason of ['MAX_TOKENS', 'RECITATION', 'OTHER', 'MALFORMED_FUNCTION_CALL']) {
      expect(classifyGeneration(textResponse('{}', { finishReason: reason }))).toEqual({
        kind: 'incomplete',
        finishReason: reason,
      });
    }
  });
});
