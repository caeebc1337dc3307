import type { StepType } from '../../api/api-types';

const LABELS: Partial<Record<StepType, string>> = {
  OHLCV_EXPORT: 'OHLCV export',
  CHART_EXPORT: 'Charts',
  LLM_REPORT: 'LLM report',
  LLM_RECOMMENDATION: 'Recommendation',
  ACCOUNT_EXPORT: 'Account',
};

export function stepTypeLabel(stepType: StepType): string {
  return LABELS[stepType] ?? stepType.toLowerCase().replace(/_/g, ' ');
}
