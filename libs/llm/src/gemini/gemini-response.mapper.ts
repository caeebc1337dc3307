import type { GenerateContentResponse } from '@google/genai';
import type { LlmCandidate, LlmResponse, LlmUsageMetadata } from '../llm-client.port';

const USAGE_FIELDS = [
  'promptTokenCount',
  'candidatesTokenCount',
  'totalTokenCount',
  'thoughtsTokenCount',
] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * One part, position kept: `text` when the part has text, `thought: true` for a thought summary
 * (the pipeline excludes those from the JSON text), `{}` for a non-text part (inline data, a
 * function call, ...), so the part count stays faithful.
 */
function toPart(part: unknown): { text?: string; thought?: boolean } {
  if (!isRecord(part)) return {};
  const out: { text?: string; thought?: boolean } = {};
  if (typeof part['text'] === 'string') out.text = part['text'];
  if (part['thought'] === true) out.thought = true;
  return out;
}

// The REST body is not validated by the SDK: every field is checked before it is copied.
function toCandidate(raw: unknown): LlmCandidate {
  const out: LlmCandidate = { parts: [] };
  if (!isRecord(raw)) return out;
  const finishReason = optionalString(raw['finishReason']);
  if (finishReason !== undefined) out.finishReason = finishReason;
  const content = raw['content'];
  const parts = isRecord(content) ? content['parts'] : undefined;
  if (Array.isArray(parts)) out.parts = parts.map(toPart);
  const safetyRatings = raw['safetyRatings'];
  if (Array.isArray(safetyRatings)) out.safetyRatings = [...safetyRatings];
  return out;
}

function toUsage(usage: unknown): LlmUsageMetadata | undefined {
  if (!isRecord(usage)) return undefined;
  const out: LlmUsageMetadata = {};
  for (const field of USAGE_FIELDS) {
    const value = usage[field];
    if (typeof value === 'number' && Number.isFinite(value)) out[field] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The SDK's `response.text` (seed 002's fallback when candidates[0] has no text parts): the
 * concatenation of candidates[0]'s non-thought text parts, or undefined. It is a getter over the
 * untyped body, so it is guarded: an odd shape yields undefined instead of a crash.
 */
function sdkText(response: GenerateContentResponse): string | undefined {
  try {
    const text: unknown = response.text;
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** generateContent response → the provider-neutral LlmResponse. */
export function fromGenerateContentResponse(response: GenerateContentResponse): LlmResponse {
  const candidates: unknown = response.candidates;
  const out: LlmResponse = {
    candidates: Array.isArray(candidates) ? candidates.map((c: unknown) => toCandidate(c)) : [],
  };
  const text = sdkText(response);
  if (text !== undefined) out.text = text;
  const usage = toUsage(response.usageMetadata);
  if (usage !== undefined) out.usageMetadata = usage;
  const modelVersion = optionalString(response.modelVersion);
  if (modelVersion !== undefined) out.modelVersion = modelVersion;
  const responseId = optionalString(response.responseId);
  if (responseId !== undefined) out.responseId = responseId;
  const feedback: unknown = response.promptFeedback;
  if (isRecord(feedback)) {
    const blockReason = optionalString(feedback['blockReason']);
    out.promptFeedback = blockReason !== undefined ? { blockReason } : {};
  }
  return out;
}
