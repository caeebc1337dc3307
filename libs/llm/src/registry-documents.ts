import { type LlmPrompt, type LlmSchema, validate, type ValidationIssue } from '@tda/contracts';
import { RegistryDocumentInvalidError } from './llm.errors';

/** Contract checks shared by every registry adapter (read and write side). */

function issueSummary(issues: readonly ValidationIssue[]): string {
  // paths and keywords only: a prompt's texts must not leak into an error message
  return issues
    .slice(0, 5)
    .map((i) => `${i.path} (${i.keyword})`)
    .join('; ');
}

function sanitizedIssues(issues: readonly ValidationIssue[]): { path: string; keyword: string }[] {
  return issues.slice(0, 10).map((i) => ({ path: i.path, keyword: i.keyword }));
}

/**
 * Validates a stored (or to-be-stored) prompt document whose id is `promptId`. Firestore
 * timestamps are not part of the contract's shape, so adapters convert them first.
 */
export function parsePromptDocument(promptId: string, data: unknown): LlmPrompt {
  const result = validate.llmPrompt(data);
  if (!result.ok) {
    throw new RegistryDocumentInvalidError(
      'prompts',
      promptId,
      sanitizedIssues(result.issues),
      issueSummary(result.issues),
    );
  }
  if (result.value.promptId !== promptId) {
    throw new RegistryDocumentInvalidError(
      'prompts',
      promptId,
      [{ path: '/promptId', keyword: 'const' }],
      'promptId does not match the document id',
    );
  }
  return result.value;
}

export function parseSchemaDocument(schemaId: string, data: unknown): LlmSchema {
  const result = validate.llmSchema(data);
  if (!result.ok) {
    throw new RegistryDocumentInvalidError(
      'schemas',
      schemaId,
      sanitizedIssues(result.issues),
      issueSummary(result.issues),
    );
  }
  if (result.value.schemaId !== schemaId) {
    throw new RegistryDocumentInvalidError(
      'schemas',
      schemaId,
      [{ path: '/schemaId', keyword: 'const' }],
      'schemaId does not match the document id',
    );
  }
  return result.value;
}
