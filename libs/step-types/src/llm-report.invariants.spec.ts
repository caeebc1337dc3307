import type { LlmReportFile } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { describe, expect, it } from 'vitest';
import { llmReportFileProblem } from './llm-report.invariants';
import { LLM_REPORT_STEP } from './llm-report.step-type';

const TIMEFRAME = loadExample('llm_report_file.1w.example.json') as LlmReportFile;
const AGGREGATE = loadExample('llm_report_file.aggregate.example.json') as LlmReportFile;

function edit(file: LlmReportFile, change: (copy: LlmReportFile) => void): LlmReportFile {
  const copy = structuredClone(file);
  change(copy);
  return copy;
}

describe('llmReportFileProblem', () => {
  it('accepts the contract examples of both kinds, and is the descriptor check', () => {
    expect(llmReportFileProblem(TIMEFRAME)).toBeUndefined();
    expect(llmReportFileProblem(AGGREGATE)).toBeUndefined();
    expect(LLM_REPORT_STEP.artifact.check).toBe(llmReportFileProblem);
    expect(LLM_REPORT_STEP.artifact.identity(AGGREGATE)).toEqual({
      runId: AGGREGATE.metadata.runId,
      stepId: AGGREGATE.metadata.stepId,
    });
  });

  it('a report of one timeframe keeps its timeframe and its four inputs', () => {
    expect(
      llmReportFileProblem(
        edit(TIMEFRAME, (f) => {
          delete f.metadata.timeframe;
        }),
      ),
    ).toBe('a report of one timeframe needs metadata.timeframe');
    for (const field of [
      'ohlcvGcsUri',
      'chartsManifestGcsUri',
      'chartGcsUris',
      'previousReportGcsUris',
    ] as const) {
      expect(
        llmReportFileProblem(
          edit(TIMEFRAME, (f) => {
            delete f.metadata.inputs[field];
          }),
        ),
      ).toBe(`metadata.inputs lacks ${field}`);
    }
    expect(
      llmReportFileProblem(
        edit(TIMEFRAME, (f) => {
          f.metadata.schemaId = 'llm_aggregate_report_output_v1';
        }),
      ),
    ).toBe(
      'llm_aggregate_report_output_v1 is the output format of aggregated reports (metadata.inputs.reportRefs)',
    );
  });

  it('schemaVersion is the N of the schemaId', () => {
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          f.metadata.schemaVersion = 2;
        }),
      ),
    ).toBe('metadata.schemaVersion 2 does not match schemaId llm_aggregate_report_output_v1');
  });

  it('an aggregated report has no timeframe, no timeframe inputs and an aggregate schema', () => {
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          f.metadata.timeframe = '1w';
        }),
      ),
    ).toBe('an aggregated report (metadata.inputs.reportRefs) has no metadata.timeframe');
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          f.metadata.inputs.chartGcsUris = [];
        }),
      ),
    ).toBe(
      'an aggregated report reads no OHLCV, charts or earlier reports (metadata.inputs.chartGcsUris)',
    );
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          f.metadata.schemaId = 'llm_report_output_v1';
        }),
      ),
    ).toBe(
      'an aggregated report has an llm_aggregate_report_output_v<N> schemaId, not llm_report_output_v1',
    );
  });

  it('an aggregated report cites only its distinct input reports, at least once', () => {
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          const [first] = f.metadata.inputs.reportRefs ?? [];
          if (first !== undefined) f.metadata.inputs.reportRefs = [first, first];
        }),
      ),
    ).toBe('metadata.inputs.reportRefs names a reportId twice');
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          f.output.details['citations'] = [];
        }),
      ),
    ).toBe('an aggregated report cites its input reports in output.details.citations');
    expect(
      llmReportFileProblem(
        edit(AGGREGATE, (f) => {
          (f.output.details['citations'] as { reportId: string }[])[2] = {
            reportId: 'rpt_000000000000000000000000',
          };
        }),
      ),
    ).toBe('output.details.citations[2] cites no report of metadata.inputs.reportRefs');
  });
});
