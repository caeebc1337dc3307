import type { OutputCheck, OutputRuleViolation } from './structured-output.pipeline';

/** The rules an aggregated report's citations are checked against (rule ids of the violations). */
export const CITATION_RULES = {
  required: 'citations_required',
  unknownReport: 'citation_unknown_report',
} as const;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The domain check of an aggregated report (flow 3) for the structured-output pipeline: the output
 * cites its sources in details.citations, and every cited reportId is one of the input reports. An
 * input report the output does not cite is fine; a reportId it invents is a violation (repaired
 * once, then INVALID_STRUCTURED_OUTPUT). Violations name paths and counts, never the cited text.
 */
export function citationCheck(reportIds: readonly string[]): OutputCheck {
  const known = new Set(reportIds);
  return (output) => {
    const citations = asObject(output['details'])?.['citations'];
    if (!Array.isArray(citations) || citations.length === 0) {
      return [
        {
          rule: CITATION_RULES.required,
          path: '/details/citations',
          message: 'cite at least one input report by its reportId in details.citations',
        },
      ];
    }
    const violations: OutputRuleViolation[] = [];
    citations.forEach((citation, index) => {
      const reportId = asObject(citation)?.['reportId'];
      if (typeof reportId === 'string' && known.has(reportId)) return;
      violations.push({
        rule: CITATION_RULES.unknownReport,
        path: `/details/citations/${index}/reportId`,
        message: `must be one of the ${known.size} reportIds listed in UserInput, exactly as written there`,
      });
    });
    return violations;
  };
}
