import { describe, expect, it } from 'vitest';
import { validate } from './index';
import { type AjvError, ContractViolationError, runValidator, toIssues } from './validation';

const STEP_ID_PATTERN_TEXT = '^[A-Za-z0-9][A-Za-z0-9_:\\-]*$';

/** The pair ajv emits for one key that fails `propertyNames: {pattern}` (allErrors mode). */
function badKeyErrors(instancePath: string, key: string): AjvError[] {
  return [
    {
      instancePath,
      schemaPath: 'common.schema.json#/$defs/StepId/pattern',
      keyword: 'pattern',
      params: { pattern: STEP_ID_PATTERN_TEXT },
      message: `must match pattern "${STEP_ID_PATTERN_TEXT}"`,
      propertyName: key,
    },
    {
      instancePath,
      schemaPath: '#/properties/steps/propertyNames',
      keyword: 'propertyNames',
      params: { propertyName: key },
      message: 'property name must be valid',
    },
  ];
}

describe('toIssues', () => {
  it('reports a propertyNames failure once, on the object, naming the key and the rule', () => {
    expect(toIssues(badKeyErrors('/steps', 'ohlcv.1M'))).toEqual([
      {
        path: '/steps',
        keyword: 'propertyNames',
        message: `invalid key 'ohlcv.1M': must match pattern "${STEP_ID_PATTERN_TEXT}"`,
      },
    ]);
  });

  it('keeps one issue per bad key and does not merge keys of different objects', () => {
    const issues = toIssues([
      ...badKeyErrors('/steps', 'a.b'),
      ...badKeyErrors('/steps', 'c/d'),
      ...badKeyErrors('/other', 'a.b'),
    ]);
    expect(issues.map((i) => `${i.path} ${i.message.split(':')[0] ?? ''}`)).toEqual([
      "/steps invalid key 'a.b'",
      "/steps invalid key 'c/d'",
      "/other invalid key 'a.b'",
    ]);
  });

  it('still reports a propertyNames error that comes without the nested detail', () => {
    expect(
      toIssues([
        {
          instancePath: '',
          keyword: 'propertyNames',
          params: { propertyName: 'x y' },
          message: 'property name must be valid',
        },
      ]),
    ).toEqual([{ path: '/', keyword: 'propertyNames', message: "invalid key 'x y'" }]);
  });

  it('does not treat an unrelated error of a valid key as a key failure', () => {
    const issues = toIssues([
      ...badKeyErrors('/steps', 'a.b'),
      {
        instancePath: '/steps/ok_key',
        keyword: 'required',
        params: { missingProperty: 'status' },
        message: "must have required property 'status'",
      },
    ]);
    expect(issues.map((i) => i.keyword)).toEqual(['propertyNames', 'required']);
  });

  it('quotes offending scalar values from the document, truncated, never objects', () => {
    const data = { a: 'x'.repeat(200), b: { nested: true }, c: 7 };
    const pattern = (path: string): AjvError => ({
      instancePath: path,
      keyword: 'pattern',
      params: { pattern: '^z$' },
    });
    const [long, object, number] = toIssues([pattern('/a'), pattern('/b'), pattern('/c')], data);
    expect(long?.message).toBe(`'${'x'.repeat(76)}... does not match the required pattern ^z$`);
    expect(object?.message).toBe('does not match the required pattern ^z$');
    expect(number?.message).toBe('7 does not match the required pattern ^z$');
  });

  it('resolves escaped JSON Pointer segments when quoting values', () => {
    const data = { steps: { 'a/b': { status: 'NOPE' } } };
    const [issue] = toIssues(
      [
        {
          instancePath: '/steps/a~1b/status',
          keyword: 'enum',
          params: { allowedValues: ['READY'] },
        },
      ],
      data,
    );
    expect(issue).toEqual({
      path: '/steps/a~1b/status',
      keyword: 'enum',
      message: `'NOPE' must be one of ["READY"]`,
    });
  });

  it('drops "must match then" restatements and de-duplicates identical issues', () => {
    const required: AjvError = {
      instancePath: '/source',
      keyword: 'required',
      params: { missingProperty: 'dataset' },
    };
    const issues = toIssues([
      required,
      { ...required },
      { instancePath: '/source', keyword: 'if', params: { failingKeyword: 'then' } },
    ]);
    expect(issues).toEqual([
      { path: '/source', keyword: 'required', message: "missing required field 'dataset'" },
    ]);
  });

  it('caps the report at 20 issues', () => {
    const errors: AjvError[] = Array.from({ length: 30 }, (_, i) => ({
      instancePath: `/items/${i}`,
      keyword: 'type',
      params: { type: 'object' },
      message: 'must be object',
    }));
    expect(toIssues(errors)).toHaveLength(20);
    const keys = Array.from({ length: 30 }, (_, i) => badKeyErrors('/steps', `k.${i}`)).flat();
    expect(toIssues(keys)).toHaveLength(20);
  });

  it('returns no issues for no errors', () => {
    expect(toIssues(null)).toEqual([]);
    expect(toIssues(undefined)).toEqual([]);
  });
});

describe('runValidator', () => {
  it('returns the value when valid and quoted issues when not', () => {
    const validator = Object.assign((data: unknown) => data === 'ok', {
      errors: [{ instancePath: '', keyword: 'const', params: { allowedValue: 'ok' } }],
    });
    expect(runValidator(validator, 'ok')).toEqual({ ok: true, value: 'ok' });
    expect(runValidator(validator, 'ko')).toEqual({
      ok: false,
      issues: [{ path: '/', keyword: 'const', message: `'ko' must be "ok"` }],
    });
  });

  it('gives one issue per invalid steps key through the generated validator', () => {
    const result = validate.flowRun({
      schemaVersion: 1,
      runId: '20220301-060000_BTC-USD_k7m2qx',
      flowKey: 'adhoc_v1',
      status: 'PENDING',
      createdAt: '2022-03-01T06:00:00Z',
      updatedAt: '2022-03-01T06:00:00Z',
      trigger: { type: 'USER', source: 'test' },
      scope: { symbol: 'BTC-USD' },
      ownerId: 'u1',
      steps: {
        'x.y': {
          stepType: 'OHLCV_EXPORT',
          status: 'PENDING',
          dependsOn: [],
          inputs: {},
          outputs: {},
          createdAt: '2022-03-01T06:00:00Z',
          attempt: 0,
        },
      },
    });
    expect(result.ok ? [] : result.issues).toEqual([
      {
        path: '/steps',
        keyword: 'propertyNames',
        message: `invalid key 'x.y': must match pattern "${STEP_ID_PATTERN_TEXT}"`,
      },
    ]);
  });
});

describe('ContractViolationError', () => {
  it('summarises the first issues and carries the contract and code', () => {
    const issues = Array.from({ length: 7 }, (_, i) => ({
      path: `/f${i}`,
      keyword: 'required',
      message: `missing required field 'f${i}'`,
    }));
    const error = new ContractViolationError('trigger_request', issues);
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.contract).toBe('trigger_request');
    expect(error.message).toBe(
      "trigger_request is invalid: /f0 missing required field 'f0'; /f1 missing required field 'f1'; " +
        "/f2 missing required field 'f2'; /f3 missing required field 'f3'; /f4 missing required field 'f4'",
    );
    expect(new ContractViolationError('flow_run', issues, 'FLOW_RUN_INVALID').code).toBe(
      'FLOW_RUN_INVALID',
    );
  });
});
