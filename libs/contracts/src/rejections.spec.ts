import { describe, expect, it } from 'vitest';
import { type ValidationIssue, type ValidationResult, validate } from './index';
import { loadExample } from './testing/contract-files';

type Doc = Record<string, unknown>;

/** A mutable copy of an example, typed loosely so that tests can break it on purpose. */
function example(file: string): Doc {
  const doc = loadExample(file);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(file);
  return doc as Doc;
}

function child(doc: Doc, ...path: string[]): Doc {
  let node: unknown = doc;
  for (const key of path) {
    if (node === null || typeof node !== 'object') throw new Error(`no ${path.join('.')}`);
    node = (node as Doc)[key];
  }
  if (node === null || typeof node !== 'object') throw new Error(`no ${path.join('.')}`);
  return node as Doc;
}

function issuesOf(result: ValidationResult<unknown>): ValidationIssue[] {
  if (result.ok) throw new Error('expected the document to be rejected');
  return result.issues;
}

const RUN = 'flow_run.example.json';
const OHLCV_1M = 'ohlcv_export:1M';
const LLM_1M = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';

/** flow_run.example.json with steps renamed: the key and every dependsOn reference. */
function runWithRenamedStep(from: string, to: string): Doc {
  const run = example(RUN);
  const steps = child(run, 'steps');
  const renamed: Doc = {};
  for (const [id, step] of Object.entries(steps)) {
    const s = step as Doc;
    s['dependsOn'] = (s['dependsOn'] as string[]).map((d) => (d === from ? to : d));
    renamed[id === from ? to : id] = s;
  }
  run['steps'] = renamed;
  return run;
}

describe('flow_run rejections', () => {
  it.each([
    ['a dot', 'ohlcv_export.1M', '/steps/charts:1M:ctpl_default_v1/dependsOn/0'],
    ['a slash', 'ohlcv_export/1M', '/steps/charts:1M:ctpl_default_v1/dependsOn/0'],
  ])('rejects a stepId with %s as a steps key and inside dependsOn', (_, bad, depPath) => {
    const issues = issuesOf(validate.flowRun(runWithRenamedStep(OHLCV_1M, bad)));
    expect(issues).toContainEqual({
      path: '/steps',
      keyword: 'propertyNames',
      message: expect.stringContaining(`invalid key '${bad}'`) as string,
    });
    // the key is reported once, not once more for its nested pattern failure
    expect(issues.filter((i) => i.message.includes(`key '${bad}'`))).toHaveLength(1);
    expect(issues).toContainEqual({
      path: depPath,
      keyword: 'pattern',
      message: expect.stringMatching(
        new RegExp(`^'${bad}' does not match the required pattern`),
      ) as string,
    });
  });

  it('reports the dependsOn path of the offending reference inside every step', () => {
    const run = runWithRenamedStep(OHLCV_1M, 'ohlcv_export.1M');
    const paths = issuesOf(validate.flowRun(run))
      .filter((i) => i.keyword === 'pattern')
      .map((i) => i.path);
    expect(paths.sort()).toEqual([
      '/steps/charts:1M:ctpl_default_v1/dependsOn/0',
      `/steps/${LLM_1M}/dependsOn/0`,
    ]);
  });

  it.each([
    ['no time part', '20220301_BTC-USD_k7m2qx'],
    ['an upper-case suffix', '20220301-060000_BTC-USD_K7M2QX'],
    ['a 7-character suffix', '20220301-060000_BTC-USD_k7m2qxz'],
    ['a slash in the symbol', '20220301-060000_BTC/USD_k7m2qx'],
    ['a dot in the symbol', '20220301-060000_BTC.USD_k7m2qx'],
  ])('rejects a runId with %s', (_, runId) => {
    const run = example(RUN);
    run['runId'] = runId;
    expect(issuesOf(validate.flowRun(run))).toEqual([
      {
        path: '/runId',
        keyword: 'pattern',
        message: expect.stringContaining(
          `'${runId}' does not match the required pattern ^[0-9]{8}-`,
        ) as string,
      },
    ]);
  });

  it('rejects an unknown run status, naming the value and the allowed ones', () => {
    const run = example(RUN);
    run['status'] = 'DONE';
    expect(issuesOf(validate.flowRun(run))).toEqual([
      {
        path: '/status',
        keyword: 'enum',
        message: `'DONE' must be one of ["PENDING","RUNNING","SUCCEEDED","FAILED","CANCELLED"]`,
      },
    ]);
  });

  it('rejects an unknown step status', () => {
    const run = example(RUN);
    child(run, 'steps', OHLCV_1M)['status'] = 'QUEUED';
    const [issue, ...rest] = issuesOf(validate.flowRun(run));
    expect(rest).toEqual([]);
    expect(issue?.path).toBe(`/steps/${OHLCV_1M}/status`);
    expect(issue?.message).toMatch(/^'QUEUED' must be one of \["PENDING","READY","RUNNING",/);
  });

  it('rejects a step without stepType', () => {
    const run = example(RUN);
    delete child(run, 'steps', OHLCV_1M)['stepType'];
    expect(issuesOf(validate.flowRun(run))).toEqual([
      {
        path: `/steps/${OHLCV_1M}`,
        keyword: 'required',
        message: "missing required field 'stepType'",
      },
    ]);
  });

  it('rejects a run without runId, steps or an empty steps map', () => {
    const noId = example(RUN);
    delete noId['runId'];
    expect(issuesOf(validate.flowRun(noId))).toEqual([
      { path: '/', keyword: 'required', message: "missing required field 'runId'" },
    ]);
    const noSteps = example(RUN);
    delete noSteps['steps'];
    expect(issuesOf(validate.flowRun(noSteps))[0]?.message).toBe("missing required field 'steps'");
    const emptySteps = example(RUN);
    emptySteps['steps'] = {};
    expect(issuesOf(validate.flowRun(emptySteps))[0]?.path).toBe('/steps');
  });

  it('rejects an unknown error code on a step and on the run', () => {
    const run = example('flow_run.flow1-failed.example.json');
    child(run, 'steps', LLM_1M, 'error')['code'] = 'LLM_EXPLODED';
    child(run, 'error')['code'] = 'BQ_QUERY_FAILED';
    const issues = issuesOf(validate.flowRun(run));
    expect(issues.map((i) => [i.path, i.keyword]).sort()).toEqual([
      ['/error/code', 'enum'],
      [`/steps/${LLM_1M}/error/code`, 'enum'],
    ]);
    expect(issues.find((i) => i.path.startsWith('/steps'))?.message).toContain(
      "'LLM_EXPLODED' must be one of",
    );
  });

  it('rejects a timestamp without the Z suffix', () => {
    const run = example(RUN);
    run['createdAt'] = '2022-03-01T06:00:00+01:00';
    expect(issuesOf(validate.flowRun(run))[0]?.path).toBe('/createdAt');
  });

  it('tolerates unknown extra fields on the run and on a step (seed 002 validation policy)', () => {
    const run = example(RUN);
    run['legacyField'] = { anything: true };
    child(run, 'steps', OHLCV_1M)['debugNotes'] = 'kept as is';
    child(run, 'steps', OHLCV_1M, 'outputs')['signedUrlLegacy'] = 'https://example.com';
    const result = validate.flowRun(run);
    expect(result.ok ? result.value['legacyField'] : result.issues).toEqual({ anything: true });
  });
});

describe('message rejections', () => {
  it('rejects a step_ready message with an extra field', () => {
    const msg = example('step_ready.example.json');
    msg['priority'] = 'high';
    expect(issuesOf(validate.stepReady(msg))).toEqual([
      { path: '/', keyword: 'additionalProperties', message: "unknown field 'priority'" },
    ]);
  });

  it('rejects a step_event with an unknown status or error code', () => {
    const msg = example('step_event.failed.example.json');
    msg['status'] = 'DONE';
    msg['errorCode'] = 'OOPS';
    expect(issuesOf(validate.stepEvent(msg)).map((i) => i.path)).toEqual(['/status', '/errorCode']);
  });

  it.each(['month_report', 'Month_report_v1', 'month report v1', 'month_report_v'])(
    'rejects a trigger_request with flowKey %j',
    (flowKey) => {
      const body = example('trigger_request.example.json');
      body['flowKey'] = flowKey;
      expect(issuesOf(validate.triggerRequest(body))).toEqual([
        {
          path: '/flowKey',
          keyword: 'pattern',
          message: `'${flowKey}' does not match the required pattern ^[a-z][a-z0-9_]*_v[0-9]+$`,
        },
      ]);
    },
  );

  it('rejects a trigger_request with a bad symbol or an unknown timeframe', () => {
    const body = example('trigger_request.example.json');
    child(body, 'scope')['symbol'] = 'BTC.USDT';
    child(body, 'scope')['timeframes'] = ['1M', '2w'];
    expect(issuesOf(validate.triggerRequest(body)).map((i) => i.path)).toEqual([
      '/scope/symbol',
      '/scope/timeframes/1',
    ]);
  });

  it('rejects an api_error with an unknown code or an extra field', () => {
    const body = example('api_error.example.json');
    body['code'] = 'TEAPOT';
    body['stack'] = 'at ...';
    expect(issuesOf(validate.apiError(body)).map((i) => [i.path, i.keyword])).toEqual([
      ['/', 'additionalProperties'],
      ['/code', 'enum'],
    ]);
  });
});

describe('artifact rejections', () => {
  it('rejects OHLCV candles with negative numbers, an empty list or a bad policy', () => {
    const doc = example('ohlcv_export.example.json');
    const candles = doc['candles'] as Doc[];
    const first = candles[0];
    if (first === undefined) throw new Error('no candle');
    first['low'] = -1;
    doc['incompleteBucketPolicy'] = 'kept';
    expect(issuesOf(validate.ohlcvExport(doc)).map((i) => i.path)).toEqual([
      '/candles/0/low',
      '/incompleteBucketPolicy',
    ]);
    doc['candles'] = [];
    doc['incompleteBucketPolicy'] = 'dropped';
    expect(issuesOf(validate.ohlcvExport(doc))).toEqual([
      { path: '/candles', keyword: 'minItems', message: 'must NOT have fewer than 1 items' },
    ]);
  });

  it('requires the dataset of a bundled source and the exchange of a ccxt source', () => {
    const doc = example('ohlcv_export.example.json');
    delete child(doc, 'source')['dataset'];
    expect(issuesOf(validate.ohlcvExport(doc))).toEqual([
      { path: '/source', keyword: 'required', message: "missing required field 'dataset'" },
    ]);
    doc['source'] = { provider: 'ccxt', marketSymbol: 'BTC/USDT' };
    expect(issuesOf(validate.ohlcvExport(doc))[0]?.message).toBe(
      "missing required field 'exchange'",
    );
  });

  it('rejects a charts manifest item that is not a PNG or a failure with an unknown code', () => {
    const doc = example('charts_manifest.partial.example.json');
    const item = (doc['items'] as Doc[])[0];
    const failure = (doc['failures'] as Doc[])[0];
    if (item === undefined || failure === undefined) throw new Error('example changed');
    item['contentType'] = 'image/jpeg';
    failure['code'] = 'RENDERER_DOWN';
    expect(issuesOf(validate.chartsManifest(doc))).toEqual([
      {
        path: '/items/0/contentType',
        keyword: 'const',
        message: `'image/jpeg' must be "image/png"`,
      },
      {
        path: '/failures/0/code',
        keyword: 'enum',
        message: expect.stringContaining("'RENDERER_DOWN' must be one of") as string,
      },
    ]);
  });

  it('rejects a report without output.summary.markdown and keeps extra model-owned fields', () => {
    const doc = example('llm_report_file.example.json');
    child(doc, 'output')['extraModelField'] = { any: 'shape' };
    expect(validate.llmReportFile(doc).ok).toBe(true);
    delete child(doc, 'output', 'summary')['markdown'];
    expect(issuesOf(validate.llmReportFile(doc))).toEqual([
      {
        path: '/output/summary',
        keyword: 'required',
        message: "missing required field 'markdown'",
      },
    ]);
  });

  it('rejects worker-owned report metadata that breaks the conventions', () => {
    const doc = example('llm_report_file.example.json');
    const metadata = child(doc, 'metadata');
    metadata['schemaId'] = 'report_v1';
    metadata['provider'] = 'openai';
    metadata['temperature'] = 0.2;
    child(metadata, 'llm', 'attempts')['total'] = 3;
    expect(issuesOf(validate.llmReportFile(doc)).map((i) => [i.path, i.keyword])).toEqual([
      ['/metadata', 'additionalProperties'],
      ['/metadata/schemaId', 'pattern'],
      ['/metadata/provider', 'enum'],
      ['/metadata/llm/attempts/total', 'maximum'],
    ]);
  });
});

describe('LLM registry and profile rejections', () => {
  it('applies the kind-specific schemaId convention', () => {
    const doc = example('llm_schema.example.json');
    doc['schemaId'] = 'llm_recommendation_output_v1';
    expect(issuesOf(validate.llmSchema(doc))).toEqual([
      {
        path: '/schemaId',
        keyword: 'pattern',
        message: `'llm_recommendation_output_v1' does not match the required pattern ^llm_(aggregate_)?report_output_v[1-9][0-9]*$`,
      },
    ]);
    doc['kind'] = 'LLM_RECOMMENDATION_OUTPUT';
    expect(validate.llmSchema(doc).ok).toBe(true);
    doc['schemaId'] = 'llm_report_output_v0';
    doc['kind'] = 'LLM_REPORT_OUTPUT';
    expect(issuesOf(validate.llmSchema(doc))[0]?.path).toBe('/schemaId');
  });

  it('rejects an LLM_REPORT_OUTPUT schema that drops the seed 002 minimal invariants', () => {
    const doc = example('llm_schema.example.json');
    const jsonSchema = child(doc, 'jsonSchema');
    jsonSchema['required'] = ['summary'];
    delete child(jsonSchema, 'properties', 'summary')['required'];
    expect(issuesOf(validate.llmSchema(doc))).toEqual([
      { path: '/jsonSchema/required', keyword: 'contains', message: 'must contain "details"' },
      {
        path: '/jsonSchema/properties/summary',
        keyword: 'required',
        message: "missing required field 'required'",
      },
    ]);
  });

  it('rejects a prompt without instructions or with an unversioned promptId', () => {
    const doc = example('llm_prompt.example.json');
    delete doc['systemInstruction'];
    doc['promptId'] = 'prompt_month';
    expect(issuesOf(validate.llmPrompt(doc)).map((i) => i.path)).toEqual(['/', '/promptId']);
  });

  it('rejects llmProfile parameters outside the allowlist and out of range', () => {
    const doc = example('llm_profile.example.json');
    doc['seed'] = 42;
    doc['temperature'] = 2.5;
    child(doc, 'thinkingConfig')['thinkingLevel'] = 'extreme';
    expect(issuesOf(validate.llmProfile(doc)).map((i) => [i.path, i.message])).toEqual([
      ['/', "unknown field 'seed'"],
      ['/temperature', 'must be <= 2'],
      [
        '/thinkingConfig/thinkingLevel',
        `'extreme' must be one of ["minimal","low","medium","high"]`,
      ],
    ]);
  });

  it('rejects an inline schema next to structuredOutput', () => {
    const doc = example('llm_profile.example.json');
    doc['jsonSchema'] = { type: 'object' };
    expect(issuesOf(validate.llmProfile(doc))).toEqual([
      {
        path: '/jsonSchema',
        keyword: 'false schema',
        message: "field 'jsonSchema' is not allowed in this combination",
      },
    ]);
  });

  it('leaves candidateCount and responseMimeType rules to the LLM_REPORT worker', () => {
    const doc = example('llm_profile.example.json');
    doc['candidateCount'] = 2;
    doc['responseMimeType'] = 'text/plain';
    expect(validate.llmProfile(doc).ok).toBe(true);
  });
});

describe('flow_run: steps.<id>.inputs selected by stepType', () => {
  const CHARTS_1M = 'charts:1M:ctpl_default_v1';

  it('checks each step against its step type inputs schema, naming the path', () => {
    const run = example(RUN);
    child(run, 'steps', CHARTS_1M, 'inputs')['typo'] = 1;
    delete child(run, 'steps', LLM_1M, 'inputs')['llm'];
    child(run, 'steps', OHLCV_1M, 'inputs')['lookback'] = 5000;
    const paths = issuesOf(validate.flowRun(run)).map((i) => `${i.path} ${i.message}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        `/steps/${CHARTS_1M}/inputs unknown field 'typo'`,
        `/steps/${LLM_1M}/inputs missing required field 'llm'`,
        `/steps/${OHLCV_1M}/inputs/lookback must be <= 1000`,
      ]),
    );
  });

  it('gives the charts shorthand or requests, never neither', () => {
    const ok = { ohlcvStepId: 'ohlcv_export:1M', chartTemplateId: 'ctpl_default_v1' };
    expect(validate.chartExportInputs(ok).ok).toBe(true);
    const { chartTemplateId: _dropped, ...neither } = ok;
    expect(validate.chartExportInputs(neither).ok).toBe(false);
  });

  it('accepts any inputs object for a step type without an inputs schema yet', () => {
    const run = example(RUN);
    const step = child(run, 'steps', OHLCV_1M);
    step['stepType'] = 'NEWS_EXPORT';
    step['inputs'] = { anything: ['goes'] };
    expect(issuesOf(validate.flowRun({ ...run, status: 'BOGUS' })).map((i) => i.path)).toEqual([
      '/status',
    ]);
  });
});
