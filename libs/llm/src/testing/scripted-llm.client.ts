import type {
  LlmCandidate,
  LlmClient,
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmUsageMetadata,
} from '../llm-client.port';

/** One scripted answer: a response, an error to throw, or a function of the request. */
export type ScriptedStep =
  LlmResponse | Error | ((request: LlmRequest) => LlmResponse | Promise<LlmResponse>);

/**
 * A typed fake LlmClient answering from a script, one step per call, and recording every
 * request. A call past the end of the script fails the test loudly.
 */
export class ScriptedLlmClient implements LlmClient {
  readonly requests: LlmRequest[] = [];
  private readonly steps: ScriptedStep[];

  constructor(
    steps: readonly ScriptedStep[],
    readonly provider: LlmProvider = 'gemini',
  ) {
    this.steps = [...steps];
  }

  get calls(): number {
    return this.requests.length;
  }

  /** Steps not consumed yet. */
  get remaining(): number {
    return this.steps.length;
  }

  async generate(request: LlmRequest): Promise<LlmResponse> {
    this.requests.push(request);
    const step = this.steps.shift();
    if (step === undefined) {
      throw new Error(`ScriptedLlmClient: unexpected call #${this.requests.length}`);
    }
    if (step instanceof Error) throw step;
    if (typeof step === 'function') return step(request);
    return structuredClone(step);
  }
}

export interface ResponseOptions {
  finishReason?: string;
  usageMetadata?: LlmUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Also set response.text (the SDK getter) to this value. */
  responseText?: string;
  safetyRatings?: unknown[];
}

function response(candidates: LlmCandidate[], options: ResponseOptions): LlmResponse {
  const out: LlmResponse = {
    candidates,
    usageMetadata: options.usageMetadata ?? {
      promptTokenCount: 100,
      candidatesTokenCount: 50,
      totalTokenCount: 150,
    },
    modelVersion: options.modelVersion ?? 'gemini-2.5-flash',
    responseId: options.responseId ?? 'resp-1',
  };
  if (options.responseText !== undefined) out.text = options.responseText;
  return out;
}

/** A response whose candidates[0] has one text part (finishReason STOP by default). */
export function textResponse(text: string, options: ResponseOptions = {}): LlmResponse {
  const candidate: LlmCandidate = {
    finishReason: options.finishReason ?? 'STOP',
    parts: [{ text }],
  };
  if (options.safetyRatings !== undefined) candidate.safetyRatings = options.safetyRatings;
  return response([candidate], options);
}

/** A response carrying `value` as JSON text. */
export function jsonResponse(value: unknown, options: ResponseOptions = {}): LlmResponse {
  return textResponse(JSON.stringify(value), options);
}

/** A response with the given parts (e.g. thought parts, several text chunks). */
export function partsResponse(
  parts: LlmCandidate['parts'],
  options: ResponseOptions = {},
): LlmResponse {
  return response([{ finishReason: options.finishReason ?? 'STOP', parts }], options);
}

/** No candidates at all (e.g. a blocked prompt), optionally with a promptFeedback.blockReason. */
export function emptyResponse(
  options: ResponseOptions & { blockReason?: string } = {},
): LlmResponse {
  const out = response([], options);
  if (options.blockReason !== undefined) out.promptFeedback = { blockReason: options.blockReason };
  return out;
}
