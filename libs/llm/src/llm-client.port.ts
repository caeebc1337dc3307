import { TdaError, type ErrorCode } from '@tda/contracts';

/**
 * The LlmClient port (DESIGN.md §1 libs/llm): one generateContent-shaped call. The Gemini adapter
 * (@google/genai, API key or Vertex AI) and the deterministic offline analyst implement it; the
 * structured-output pipeline (extraction, finishReason mapping, validation, at most one repair)
 * sits above it and is the same for both.
 */
export type LlmProvider = 'gemini' | 'vertex' | 'offline';

export type LlmPart =
  | { text: string }
  /** Inline bytes, e.g. a chart PNG (seed 002: ≤ 256 KB each), base64-encoded. */
  | { inlineData: { mimeType: string; data: string } };

export interface LlmThinkingConfig {
  includeThoughts?: boolean;
  thinkingLevel?: string;
  thinkingBudget?: number;
}

/** The effective request config: exactly the step's llmProfile allowlist (seed 002), no merging. */
export interface LlmGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  responseMimeType: string;
  /** JSON Schema of the model-owned output (llm_schemas/{schemaId}.jsonSchema). */
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: LlmThinkingConfig;
}

/**
 * Structured context the offline analyst computes its report from (the Gemini adapter ignores it:
 * the same information reaches Gemini as the text/image parts of `contents`).
 */
export interface LlmStructuredContext {
  symbol: string;
  timeframe?: string;
  /** Parsed ohlcv_export artifact. */
  ohlcv?: unknown;
  /** Parsed charts_manifest artifact. */
  chartsManifest?: unknown;
  /** Parsed llm_report_file artifacts of previous reports. */
  previousReports?: unknown[];
  /** Flow 5: parsed indicator_values artifacts given to a follow-up report. */
  indicatorValues?: unknown[];
  /** Flow 5: the step may add indicatorRequests (the prompt lists the catalogue). */
  mayRequestIndicators?: boolean;
  /** What an LLM_RECOMMENDATION is computed from (read by the offline recommender). */
  recommendation?: RecommendationContext;
  /** What an aggregated report (flow 3) synthesises (read by the offline analyst). */
  aggregate?: AggregateContext;
}

/** The parsed input reports of an aggregated report, as UserInput lists them. */
export interface AggregateContext {
  /** The moment the aggregated report describes (the run's asOf, RFC 3339). */
  asOf: string;
  /** In inputs order (longest timeframe first), each with the id the output cites it by. */
  reports: { reportId: string; timeframe?: string; asOf: string; report: unknown }[];
}

/** The parsed inputs of a recommendation, as UserInput lists them. */
export interface RecommendationContext {
  /** The moment the recommendation describes (RFC 3339). */
  asOf: string;
  /** The last close at or before asOf: the anchor of every level. */
  lastClose: number;
  /** The input reports in inputs order (longest timeframe first), each with its citable id. */
  reports: { reportId: string; stepId: string; timeframe?: string; report: unknown }[];
  /** The parsed account_snapshot, when the step reads one. */
  account?: unknown;
  /** Flow 6: the parsed news_export, when the step reads one (untrusted text). */
  news?: unknown;
  /** The limits the output is checked against (the account's, or the default). */
  riskLimits: { maxPositionFraction: number; maxRiskPerTradeFraction?: number };
}

export interface LlmRequest {
  model: string;
  systemInstruction: string;
  /** The user turn: base prompt, the generated UserInput section, context parts, images. */
  contents: LlmPart[];
  generationConfig: LlmGenerationConfig;
  /** Per-request deadline (seed 002: 600 s by default, always within the step's budget). */
  deadlineMs: number;
  signal?: AbortSignal;
  context?: LlmStructuredContext;
  /** 1 for the first call, 2 for the structured-output repair call. */
  attempt: number;
}

export interface LlmCandidate {
  finishReason?: string;
  /** In order; thought parts are marked and excluded from the JSON text. */
  parts: { text?: string; thought?: boolean }[];
  safetyRatings?: unknown[];
}

export interface LlmUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** A provider-neutral view of a generateContent response. */
export interface LlmResponse {
  candidates: LlmCandidate[];
  /** The SDK's `response.text` (fallback of the candidate-text rule when there are no text parts). */
  text?: string;
  usageMetadata?: LlmUsageMetadata;
  modelVersion?: string;
  /** Provider request/response id for correlation. */
  responseId?: string;
  promptFeedback?: { blockReason?: string };
}

export interface LlmClient {
  readonly provider: LlmProvider;
  generate(request: LlmRequest): Promise<LlmResponse>;
}

/**
 * A failed provider call, with a code from the closed enum: LLM_TIMEOUT (deadline), LLM_UNAVAILABLE
 * (429, 5xx, network — retryable), LLM_PROFILE_INVALID (the provider rejected the request config,
 * e.g. an unsupported schema or model). Messages are sanitized: status and reason, never the
 * prompt, the context or the model output.
 */
export class LlmCallError extends TdaError {
  declare readonly code: LlmCallErrorCode;

  constructor(
    code: LlmCallErrorCode,
    message: string,
    retryable: boolean,
    details: Record<string, unknown> = {},
  ) {
    super(code, message, { retryable, details });
  }
}

export type LlmCallErrorCode = Extract<
  ErrorCode,
  'LLM_TIMEOUT' | 'LLM_UNAVAILABLE' | 'LLM_PROFILE_INVALID'
>;
