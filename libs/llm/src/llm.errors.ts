import { TdaError } from '@tda/contracts';

/**
 * The error families of this library (besides LlmCallError, which belongs to the port). Each
 * carries a contracts ErrorCode, so a worker turns it into `steps.<id>.error` without knowing
 * where it came from, and `details` that are safe to persist: field names, ids, URIs, sizes,
 * JSON Pointers and keywords — never prompt text, context payloads or model output.
 */

/** A registry document (llm_prompts / llm_schemas) that exists but breaks its contract. */
export class RegistryDocumentInvalidError extends TdaError {
  constructor(
    readonly collection: 'prompts' | 'schemas',
    readonly docId: string,
    readonly issues: readonly { path: string; keyword: string }[],
    reason: string,
  ) {
    // seed 002: a missing/invalid schema is LLM_PROFILE_INVALID; a broken prompt is a bad input
    // reference of the step (its promptId points to nothing usable).
    super(
      collection === 'schemas' ? 'LLM_PROFILE_INVALID' : 'INVALID_STEP_INPUTS',
      `${collection === 'prompts' ? 'llm_prompts' : 'llm_schemas'}/${docId} is invalid: ${reason}`,
      { details: { collection, docId, issues: [...issues] }, retryable: false },
    );
  }
}

/** seed 002 pre-flight: the step's llmProfile (or the schema it names) cannot be used. */
export class LlmProfileError extends TdaError {
  constructor(
    /** The offending profile field, e.g. `candidateCount` or `structuredOutput.schemaId`. */
    readonly field: string,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super('LLM_PROFILE_INVALID', message, { details });
  }
}

/** Which context artifact a ContextInputError is about. */
export type ContextArtifactKind =
  | 'ohlcv'
  | 'chartsManifest'
  | 'previousReport'
  | 'chart'
  /** An input report of a recommendation. */
  | 'report'
  /** The account snapshot of a recommendation. */
  | 'account'
  /** Indicator values computed for a follow-up report (flow 5). */
  | 'indicators'
  /** The news export of a run (flow 6): untrusted text. */
  | 'news';

/** A context artifact the prompt cannot be built from (not JSON, not a PNG, ...). */
export class ContextInputError extends TdaError {
  constructor(
    message: string,
    details: {
      artifact: ContextArtifactKind;
      uri: string;
      bytes: number;
      [key: string]: unknown;
    },
  ) {
    super('INVALID_STEP_INPUTS', message, { details, retryable: false });
  }
}

/** seed 002 hard limits: a JSON artifact over 64 KB or a chart image over 256 KB. */
export class ContextLimitError extends ContextInputError {
  constructor(artifact: ContextArtifactKind, uri: string, bytes: number, limitBytes: number) {
    super(
      `${artifact} artifact ${uri} is ${bytes} bytes, over the ${limitBytes}-byte limit for ${
        artifact === 'chart' ? 'chart images' : 'JSON context artifacts'
      }`,
      { artifact, uri, bytes, limitBytes },
    );
  }
}

/** An artifact the prompt needs is not there (a chart image the manifest lists, ...). */
export class ContextArtifactMissingError extends TdaError {
  constructor(what: string, uri: string) {
    super('INVALID_STEP_INPUTS', `${what} does not exist: ${uri}`, {
      details: { uri },
      retryable: false,
    });
  }
}

/** The step's promptId names no llm_prompts document. */
export class PromptNotFoundError extends TdaError {
  constructor(readonly promptId: string) {
    super(
      'INVALID_STEP_INPUTS',
      `inputs.llm.promptId '${promptId}' is not in the prompt registry`,
      {
        details: { field: 'llm.promptId', promptId },
        retryable: false,
      },
    );
  }
}
