import { canonicalJson, type JsonSchemaObject, type OutputValidationError } from './output-schema';

/**
 * Why a candidate was rejected (seed 002 reason.kind, plus incomplete_output for truncation and
 * invariant_violation for a schema-valid output that breaks a rule the step checks in code).
 */
export type InvalidOutputKind =
  'missing_text' | 'incomplete_output' | 'json_parse' | 'schema_validation' | 'invariant_violation';

export interface RepairPromptInput {
  schemaId: string;
  jsonSchema: JsonSchemaObject;
  reason: { kind: InvalidOutputKind; message: string };
  validationErrors: readonly OutputValidationError[];
  /** The rejected candidate text; kept in memory only (never logged or persisted). */
  previousText?: string;
  /** The previous text is left out above this size (it would crowd out the inputs). */
  maxPreviousTextBytes?: number;
}

export const DEFAULT_MAX_PREVIOUS_TEXT_BYTES = 32 * 1024;

/**
 * The text of the repair call (seed 002 "Repair prompt contract"), generated in code: the
 * reason, the sanitized validation errors, the schema, and the rule to return only JSON. It is
 * appended to the original request contents, so the model regenerates the report from the same
 * inputs rather than patching text blindly.
 */
export function buildRepairPrompt(input: RepairPromptInput): string {
  const lines = [
    '## Structured output repair',
    '',
    `Your previous response was rejected: kind=${input.reason.kind}. ${input.reason.message}`,
  ];
  if (input.reason.kind === 'incomplete_output') {
    lines.push(
      'It was cut off before the end: keep the report shorter so that the whole JSON fits.',
    );
  }
  if (input.reason.kind === 'invariant_violation') {
    lines.push(
      'It matched the schema but broke the rules below: keep what is right and fix every listed rule.',
    );
  }
  if (input.validationErrors.length > 0) {
    lines.push('', 'Validation errors (JSON Pointer: problem):');
    for (const error of input.validationErrors) {
      lines.push(`- ${error.path}: ${error.message} (${error.keyword})`);
    }
  }
  lines.push(
    '',
    `Return ONLY one JSON object that matches the JSON Schema "${input.schemaId}" below.`,
    'No Markdown, no code fences, no text before or after the JSON.',
    'Regenerate the complete report from the inputs above; do not omit required fields.',
    '',
    `JSON Schema ${input.schemaId}:`,
    canonicalJson(input.jsonSchema),
  );
  const previous = input.previousText;
  const limit = input.maxPreviousTextBytes ?? DEFAULT_MAX_PREVIOUS_TEXT_BYTES;
  if (previous !== undefined && previous !== '' && Buffer.byteLength(previous, 'utf8') <= limit) {
    lines.push('', 'Your previous (rejected) response, for reference:', previous);
  }
  return lines.join('\n');
}
