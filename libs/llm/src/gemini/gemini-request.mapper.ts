import type {
  GenerateContentConfig,
  GenerateContentParameters,
  Part,
  ThinkingConfig,
  ThinkingLevel,
} from '@google/genai';
import type {
  LlmGenerationConfig,
  LlmPart,
  LlmRequest,
  LlmThinkingConfig,
} from '../llm-client.port';

function toPart(part: LlmPart): Part {
  if ('text' in part) return { text: part.text };
  return { inlineData: { mimeType: part.inlineData.mimeType, data: part.inlineData.data } };
}

function toThinkingConfig(config: LlmThinkingConfig): ThinkingConfig {
  const out: ThinkingConfig = {};
  if (config.includeThoughts !== undefined) out.includeThoughts = config.includeThoughts;
  if (config.thinkingBudget !== undefined) out.thinkingBudget = config.thinkingBudget;
  // Sent verbatim (e.g. "low" or "LOW"): the provider validates it, and a value it rejects comes
  // back as 400 → LLM_PROFILE_INVALID rather than being silently rewritten here.
  if (config.thinkingLevel !== undefined) out.thinkingLevel = config.thinkingLevel as ThinkingLevel;
  return out;
}

/** Exactly the fields the profile sets: nothing is defaulted, merged or dropped (seed 002). */
function toGenerationFields(config: LlmGenerationConfig): GenerateContentConfig {
  const out: GenerateContentConfig = { responseMimeType: config.responseMimeType };
  if (config.temperature !== undefined) out.temperature = config.temperature;
  if (config.topP !== undefined) out.topP = config.topP;
  if (config.topK !== undefined) out.topK = config.topK;
  if (config.maxOutputTokens !== undefined) out.maxOutputTokens = config.maxOutputTokens;
  if (config.stopSequences !== undefined) out.stopSequences = [...config.stopSequences];
  if (config.candidateCount !== undefined) out.candidateCount = config.candidateCount;
  if (config.responseJsonSchema !== undefined) out.responseJsonSchema = config.responseJsonSchema;
  if (config.thinkingConfig !== undefined) {
    out.thinkingConfig = toThinkingConfig(config.thinkingConfig);
  }
  return out;
}

export interface GeminiCallControls {
  /** Aborts the HTTP request (deadline or caller). */
  abortSignal: AbortSignal;
  /** The SDK's per-request timeout (ms); also sent to the server as X-Server-Timeout. */
  timeoutMs: number;
}

/**
 * LlmRequest → generateContent parameters: the system instruction, one user turn with the text and
 * inline-image parts in order, the profile's generation config, and the call controls. SDK
 * behaviours that would turn one generate() into several HTTP calls are switched off: HTTP retries
 * (retryOptions left unset — the SDK retries only when it is given) and automatic continuation.
 */
export function toGenerateContentParameters(
  request: LlmRequest,
  controls: GeminiCallControls,
): GenerateContentParameters {
  const config: GenerateContentConfig = {
    ...toGenerationFields(request.generationConfig),
    abortSignal: controls.abortSignal,
    httpOptions: { timeout: controls.timeoutMs },
    automaticContinuation: false,
  };
  // An empty system instruction is omitted: the API rejects a Content without parts.
  if (request.systemInstruction !== '') {
    config.systemInstruction = { parts: [{ text: request.systemInstruction }] };
  }
  return {
    model: request.model,
    contents: [{ role: 'user', parts: request.contents.map(toPart) }],
    config,
  };
}
