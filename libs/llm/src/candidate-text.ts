import { createHash } from 'node:crypto';
import type { LlmResponse } from './llm-client.port';

/**
 * seed 002 "Candidate text extraction": the JSON payload is the concatenation of
 * `candidates[0].content.parts[*].text` in order (thought parts excluded), taken as is — no
 * trimming, no code-fence stripping, no regex search for JSON inside text. Only when there is no
 * text part at all does `response.text` stand in. Lengths and hashes are of the exact UTF-8 bytes.
 */
export interface CandidateText {
  text: string;
  source: 'parts' | 'response_text' | 'none';
  /** UTF-8 byte length of `text`. */
  textBytes: number;
  /** sha256 (hex) of the UTF-8 bytes of `text`. */
  textSha256: string;
}

export function textDigest(text: string): { textBytes: number; textSha256: string } {
  const bytes = Buffer.from(text, 'utf8');
  return { textBytes: bytes.length, textSha256: createHash('sha256').update(bytes).digest('hex') };
}

export function extractCandidateText(response: LlmResponse): CandidateText {
  const parts = response.candidates[0]?.parts ?? [];
  const textParts = parts.filter(
    (part): part is { text: string; thought?: boolean } =>
      typeof part.text === 'string' && part.thought !== true,
  );
  if (textParts.length > 0) {
    const text = textParts.map((part) => part.text).join('');
    return { text, source: 'parts', ...textDigest(text) };
  }
  if (typeof response.text === 'string') {
    return { text: response.text, source: 'response_text', ...textDigest(response.text) };
  }
  return { text: '', source: 'none', ...textDigest('') };
}

/**
 * Finish reasons that mean the provider refused the content (SAFETY and its siblings for
 * prohibited content, blocklists, personal data, unsafe images): asking again gets the same
 * refusal, so they map to LLM_SAFETY_BLOCK without a repair attempt.
 */
export const SAFETY_FINISH_REASONS: ReadonlySet<string> = new Set([
  'SAFETY',
  'PROHIBITED_CONTENT',
  'BLOCKLIST',
  'SPII',
  'IMAGE_SAFETY',
]);

/** A generation counts as complete with STOP or when the provider gives no reason at all. */
export const COMPLETE_FINISH_REASONS: ReadonlySet<string> = new Set(['STOP']);

export type GenerationOutcome =
  | { kind: 'blocked'; source: 'prompt'; blockReason: string }
  | { kind: 'blocked'; source: 'candidate'; finishReason: string }
  | { kind: 'incomplete'; finishReason: string }
  | { kind: 'complete' };

export function classifyGeneration(response: LlmResponse): GenerationOutcome {
  const blockReason = response.promptFeedback?.blockReason;
  if (
    typeof blockReason === 'string' &&
    blockReason !== '' &&
    blockReason !== 'BLOCKED_REASON_UNSPECIFIED'
  ) {
    return { kind: 'blocked', source: 'prompt', blockReason };
  }
  const finishReason = response.candidates[0]?.finishReason;
  if (finishReason === undefined || finishReason === '') return { kind: 'complete' };
  if (SAFETY_FINISH_REASONS.has(finishReason)) {
    return { kind: 'blocked', source: 'candidate', finishReason };
  }
  if (!COMPLETE_FINISH_REASONS.has(finishReason)) return { kind: 'incomplete', finishReason };
  return { kind: 'complete' };
}
