import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSchemas, stepInputsSelection } from './generate-lib.mjs';

interface GeneratorModule {
  // typed by generate-lib.d.mts
  ROOT: string;
  generate(): Promise<Record<string, string>>;
}

describe('generated contract code', () => {
  it('is up to date with contracts/*.schema.json (run `npm run contracts:generate`)', async () => {
    const generator = (await import('./generate-lib.mjs')) as GeneratorModule;
    const files = await generator.generate();
    expect(Object.keys(files).length).toBeGreaterThanOrEqual(3);
    for (const [path, content] of Object.entries(files)) {
      const committed = readFileSync(join(generator.ROOT, path), 'utf8');
      expect(committed, `${path} is stale: run npm run contracts:generate`).toBe(content);
    }
  });

  describe('inputs selection (flow_run FlowStep allOf)', () => {
    const schemas = loadSchemas();
    const withSelection = (allOf: unknown[]) =>
      schemas.map((s) => {
        if (s.name !== 'flow_run') return s;
        const schema = structuredClone(s.schema) as { $defs: { FlowStep: { allOf: unknown[] } } };
        schema.$defs.FlowStep.allOf = allOf;
        return { ...s, schema };
      });
    const branch = (stepType: string, file: string) => ({
      if: { properties: { stepType: { const: stepType } }, required: ['stepType'] },
      then: { properties: { inputs: { $ref: file } } },
    });

    it('maps each step type with an inputs contract to it', () => {
      expect(stepInputsSelection(schemas).map((s) => [s.stepType, s.name])).toEqual([
        ['OHLCV_EXPORT', 'ohlcv_export_inputs'],
        ['CHART_EXPORT', 'chart_export_inputs'],
        ['LLM_REPORT', 'llm_report_inputs'],
        ['LLM_RECOMMENDATION', 'llm_recommendation_inputs'],
        ['ACCOUNT_EXPORT', 'account_export_inputs'],
        ['INDICATORS_ON_DEMAND', 'indicators_on_demand_inputs'],
        ['NEWS_EXPORT', 'news_export_inputs'],
        ['BACKTEST', 'backtest_inputs'],
      ]);
    });

    it('refuses an inputs contract nothing selects, and a step type selected twice', () => {
      const current = stepInputsSelection(schemas).map((s) =>
        branch(s.stepType, `${s.name}.schema.json`),
      );
      expect(() => stepInputsSelection(withSelection(current.slice(1)))).toThrow(
        /ohlcv_export_inputs\.schema\.json is not selected for OHLCV_EXPORT/,
      );
      expect(() =>
        stepInputsSelection(
          withSelection([...current, branch('LLM_REPORT', 'llm_report_inputs.schema.json')]),
        ),
      ).toThrow(/selects inputs for LLM_REPORT twice/);
    });
  });
});
