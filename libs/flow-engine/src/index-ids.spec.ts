import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { recommendationIdFor, reportIdFor } from './index-ids';

const RUN = '20260920-000000_BTC-USDT_abc12';

describe('index ids', () => {
  it('are deterministic, distinct per step and per kind', () => {
    const a = reportIdFor(RUN, 'llm_report:1d:prompt_multi_tf_v1:model_gemini_2_5_flash');
    expect(reportIdFor(RUN, 'llm_report:1d:prompt_multi_tf_v1:model_gemini_2_5_flash')).toBe(a);
    expect(reportIdFor(RUN, 'llm_report:4h:prompt_multi_tf_v1:model_gemini_2_5_flash')).not.toBe(a);
    expect(reportIdFor(`${RUN}x`, 'llm_report:1d')).not.toBe(reportIdFor(RUN, 'llm_report:1d'));
    expect(recommendationIdFor(RUN, 'llm_reco').slice(4)).not.toBe(
      reportIdFor(RUN, 'llm_reco').slice(4),
    );
  });

  it('match the contract patterns', () => {
    const report = reportIdFor(RUN, 'llm_report:1M');
    const reco = recommendationIdFor(RUN, 'llm_reco:prompt_reco_v1:model_x');
    expect(report).toMatch(/^rpt_[a-z0-9]{24}$/);
    expect(reco).toMatch(/^rec_[a-z0-9]{24}$/);
    // The contracts' own patterns (common.schema.json ReportId / RecommendationId).
    const file = validate.llmRecommendation({
      action: 'HOLD',
      signal_strength: 0.2,
      headline: 'h',
      horizon: { days: 7, label: '1-2 weeks' },
      rationale: { summary: 's', citations: [{ reportId: report, claim: 'c' }] },
      risks: ['r'],
    });
    expect(file.ok).toBe(true);
  });
});
