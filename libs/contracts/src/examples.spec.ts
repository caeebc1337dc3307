import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import {
  type ChartsManifest,
  type FlowRun,
  type LlmReportFile,
  type LlmSchema,
  type OhlcvExport,
  PROMPT_ID_PATTERN,
  STEP_STATUSES,
  type StepType,
  type ValidationResult,
  validate,
} from './index';
import {
  contractOfExample,
  contractSchemaNames,
  exampleFileNames,
  loadExample,
  validatorKey,
} from './testing/contract-files';

type Validator = (data: unknown) => ValidationResult<unknown>;
const validators: Record<string, Validator> = validate;

function examplesOf(contract: string): string[] {
  return exampleFileNames().filter((f) => contractOfExample(f) === contract);
}

/** Loads every example of a contract through its validator, so the checks below get typed values. */
function validExamples<T>(
  contract: string,
  check: (data: unknown) => ValidationResult<T>,
): { file: string; doc: T }[] {
  return examplesOf(contract).map((file) => {
    const result = check(loadExample(file));
    if (!result.ok) throw new Error(`${file}: ${JSON.stringify(result.issues)}`);
    return { file, doc: result.value };
  });
}

describe('contracts/examples', () => {
  it('has only <contract>[.<variant>].example.json files of known contracts', () => {
    const contracts = new Set(contractSchemaNames());
    const misnamed = exampleFileNames().filter(
      (f) =>
        !/^[a-z][a-z0-9_]*(\.[a-z0-9][a-z0-9-]*)?\.example\.json$/.test(f) ||
        !contracts.has(contractOfExample(f)),
    );
    expect(misnamed).toEqual([]);
  });

  it('has a <contract>.example.json for every contract schema', () => {
    const files = new Set(exampleFileNames());
    const missing = contractSchemaNames().filter((c) => !files.has(`${c}.example.json`));
    expect(missing).toEqual([]);
  });

  it('exposes exactly one validate.<contract> per contract schema', () => {
    expect(Object.keys(validate).sort()).toEqual(contractSchemaNames().map(validatorKey).sort());
  });

  describe.each(exampleFileNames())('%s', (file) => {
    it('is valid against the schema named by its prefix', () => {
      const check = validators[validatorKey(contractOfExample(file))];
      if (check === undefined) throw new Error(`no validator for ${file}`);
      const result = check(loadExample(file));
      expect(result.ok ? [] : result.issues).toEqual([]);
    });
  });
});

describe('flow_run examples', () => {
  const runs = validExamples('flow_run', validate.flowRun);
  const stepTimeframe = (stepId: string): string | undefined => stepId.split(':')[1];

  it('cover the running, succeeded and failed states', () => {
    expect(runs.map((r) => r.doc.status).sort()).toEqual(['FAILED', 'RUNNING', 'SUCCEEDED']);
  });

  it.each(runs)(
    '$file: artifacts sit at gs://tda-artifacts/runs/<runId>/<timeframe>/<stepId>.json',
    ({ doc }) => {
      const outputs = Object.entries(doc.steps).filter(([, s]) => s.outputs.gcs_uri !== undefined);
      expect(outputs.length).toBeGreaterThan(0);
      for (const [stepId, step] of outputs) {
        expect(step.timeframe).toBe(stepTimeframe(stepId));
        expect(step.outputs.gcs_uri).toBe(
          `gs://tda-artifacts/runs/${doc.runId}/${String(step.timeframe)}/${stepId}.json`,
        );
      }
    },
  );

  it.each(runs)(
    '$file: dependsOn names existing steps and progress counts the statuses',
    ({ doc }) => {
      const ids = Object.keys(doc.steps);
      for (const step of Object.values(doc.steps)) {
        for (const dep of step.dependsOn) expect(ids).toContain(dep);
      }
      const counts = Object.fromEntries(
        STEP_STATUSES.map((s) => [
          s.toLowerCase(),
          Object.values(doc.steps).filter((step) => step.status === s).length,
        ]),
      );
      expect(doc.progress).toMatchObject({ total: ids.length, ...counts });
    },
  );

  it.each(runs)('$file: a lease exists exactly on RUNNING steps', ({ doc }) => {
    for (const step of Object.values(doc.steps)) {
      expect(step.lease !== undefined).toBe(step.status === 'RUNNING');
    }
  });

  it.each(runs)('$file: terminal runs have finishedAt, failed runs an error', ({ doc }) => {
    const terminal = ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(doc.status);
    expect(doc.finishedAt !== undefined).toBe(terminal);
    expect(doc.error !== undefined).toBe(doc.status === 'FAILED');
  });

  it.each(runs)('$file: LLM_REPORT steps carry a promptId and a valid llmProfile', ({ doc }) => {
    const llmSteps = Object.values(doc.steps).filter((s) => s.stepType === 'LLM_REPORT');
    expect(llmSteps.length).toBe(2);
    for (const step of llmSteps) {
      const llm = step.inputs['llm'] as { promptId?: unknown; llmProfile?: unknown } | undefined;
      expect(String(llm?.promptId)).toMatch(PROMPT_ID_PATTERN);
      const profile = validate.llmProfile(llm?.llmProfile);
      expect(profile.ok ? [] : profile.issues).toEqual([]);
    }
  });
});

describe('artifact examples', () => {
  const succeeded = validExamples('flow_run', validate.flowRun).find(
    (r) => r.doc.status === 'SUCCEEDED',
  );
  if (succeeded === undefined) throw new Error('no succeeded flow_run example');
  const run: FlowRun = succeeded.doc;

  const artifacts: {
    file: string;
    stepType: StepType;
    doc: { runId: string; stepId: string; timeframe?: string };
  }[] = [
    ...validExamples('ohlcv_export', validate.ohlcvExport).map((e) => ({
      ...e,
      stepType: 'OHLCV_EXPORT' as const,
    })),
    ...validExamples('charts_manifest', validate.chartsManifest).map((e) => ({
      ...e,
      stepType: 'CHART_EXPORT' as const,
    })),
    // An aggregated report (flow 3) belongs to a run of its own; its inputs are checked below.
    ...validExamples('llm_report_file', validate.llmReportFile)
      .filter((e) => e.doc.metadata.inputs.reportRefs === undefined)
      .map((e) => ({ file: e.file, stepType: 'LLM_REPORT' as const, doc: e.doc.metadata })),
  ];

  it.each(artifacts)(
    '$file belongs to a step of the succeeded run example',
    ({ doc, stepType }) => {
      expect(doc.runId).toBe(run.runId);
      const step = run.steps[doc.stepId];
      expect(step?.stepType).toBe(stepType);
      expect(step?.timeframe).toBe(doc.timeframe);
    },
  );

  describe('ohlcv_export', () => {
    it.each(validExamples('ohlcv_export', validate.ohlcvExport))(
      '$file: candles are consistent',
      ({ doc }) => {
        const candles: OhlcvExport['candles'] = doc.candles;
        expect(doc.candleCount).toBe(candles.length);
        expect(doc.range.from).toBe(candles[0].openTime);
        candles.forEach((c, i) => {
          expect(c.high).toBeGreaterThanOrEqual(Math.max(c.open, c.close));
          expect(c.low).toBeLessThanOrEqual(Math.min(c.open, c.close));
          const previous = candles[i - 1];
          if (previous !== undefined) expect(c.openTime > previous.openTime).toBe(true);
          // only the last bucket may be incomplete, and only under 'marked'
          if (c.complete === false) {
            expect(i).toBe(candles.length - 1);
            expect(doc.incompleteBucketPolicy).toBe('marked');
          }
        });
      },
    );
  });

  describe('charts_manifest', () => {
    const manifests = validExamples('charts_manifest', validate.chartsManifest);

    it('include a partial success and a failure', () => {
      const partial = (m: ChartsManifest): boolean =>
        m.failures.length > 0 && m.items.length >= m.minImages;
      expect(manifests.some((m) => partial(m.doc))).toBe(true);
      expect(manifests.some((m) => m.doc.status === 'FAILED')).toBe(true);
    });

    it.each(manifests)('$file: status follows items.length >= minImages (seed 000)', ({ doc }) => {
      expect(doc.status).toBe(doc.items.length >= doc.minImages ? 'SUCCEEDED' : 'FAILED');
    });

    it.each(manifests)('$file: every requested chart is either produced or failed', ({ doc }) => {
      const requested = doc.requested.map((r) => r.chartTemplateId);
      expect(new Set(requested).size).toBe(requested.length);
      const accounted = [...doc.items, ...doc.failures].map((x) => x.chartTemplateId);
      expect(accounted.sort()).toEqual([...requested].sort());
    });
  });

  describe('llm_report_file', () => {
    const reports = validExamples('llm_report_file', validate.llmReportFile);
    const registry: LlmSchema[] = validExamples('llm_schema', validate.llmSchema).map((s) => s.doc);
    const ajv = new Ajv2020({ allErrors: true, strict: false });

    it.each(reports)('$file: schemaVersion is the N of its schemaId', ({ doc }) => {
      const aggregate = doc.metadata.inputs.reportRefs !== undefined ? 'aggregate_' : '';
      expect(doc.metadata.schemaId).toBe(
        `llm_${aggregate}report_output_v${doc.metadata.schemaVersion}`,
      );
    });

    it.each(reports)('$file: output is valid against its registry schema', ({ doc }) => {
      const entry = registry.find((s) => s.schemaId === doc.metadata.schemaId);
      if (entry === undefined) throw new Error(`no llm_schema example ${doc.metadata.schemaId}`);
      const check = ajv.compile(entry.jsonSchema);
      expect(check(doc.output) ? [] : check.errors).toEqual([]);
    });

    it.each(reports)('$file: inputs point at the run outputs', ({ doc }) => {
      const report: LlmReportFile = doc;
      const uris = Object.values(run.steps).flatMap((s) =>
        s.outputs.gcs_uri === undefined ? [] : [s.outputs.gcs_uri],
      );
      const { ohlcvGcsUri, chartsManifestGcsUri, previousReportGcsUris, reportRefs } =
        report.metadata.inputs;
      if (reportRefs !== undefined) {
        // An aggregated report reads reports of the run example, no moment after its own asOf.
        const reportUris = Object.values(run.steps)
          .filter((s) => s.stepType === 'LLM_REPORT')
          .map((s) => s.outputs.gcs_uri);
        for (const ref of reportRefs) {
          expect(reportUris).toContain(ref.gcsUri);
          expect(Date.parse(ref.asOf)).toBeLessThanOrEqual(Date.parse(report.metadata.asOf ?? ''));
        }
        expect(report.metadata.timeframe).toBeUndefined();
        return;
      }
      for (const uri of [ohlcvGcsUri, chartsManifestGcsUri, ...(previousReportGcsUris ?? [])]) {
        expect(uris).toContain(uri);
      }
    });

    it.each(reports)('$file: every citation names one of its input reports', ({ doc }) => {
      const citations = doc.output.details['citations'];
      const refs = doc.metadata.inputs.reportRefs;
      if (refs === undefined) {
        expect(citations).toBeUndefined();
        return;
      }
      const known = refs.map((r) => r.reportId);
      expect(Array.isArray(citations) && citations.length > 0).toBe(true);
      for (const citation of citations as { reportId: string }[]) {
        expect(known).toContain(citation.reportId);
      }
    });

    it('rejects an output that misses a required detail of the registry schema', () => {
      const entry = registry.find((s) => s.schemaId === 'llm_report_output_v1');
      const first = reports[0];
      if (entry === undefined || first === undefined) throw new Error('examples missing');
      const output = structuredClone(first.doc.output);
      delete output.details['outlook'];
      const check = ajv.compile(entry.jsonSchema);
      expect(check(output)).toBe(false);
      expect(check.errors?.[0]?.params).toEqual({ missingProperty: 'outlook' });
    });
  });

  describe('llm_profile', () => {
    it.each(validExamples('llm_profile', validate.llmProfile))(
      '$file: structuredOutput names a registry example',
      ({ doc }) => {
        const ids = validExamples('llm_schema', validate.llmSchema).map((s) => s.doc.schemaId);
        expect(ids).toContain(doc.structuredOutput?.schemaId);
      },
    );
  });
});
