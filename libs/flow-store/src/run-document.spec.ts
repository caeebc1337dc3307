import { type ErrorInfo, validate } from '@tda/contracts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPatchShared, deepFreeze, FIELD_DELETE } from '@tda/flow-engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRunDocumentError, InvalidRunPatchError } from './flow-store.errors';
import { patchedRunIsValid, prepareNewRun, prepareRunPatch, readRunDocument } from './run-document';
import { defaultSteps, makeFlowRun, makeParallelSteps, makeRunId, makeStep } from './testing';

const now = new Date('2026-05-05T05:05:05.005Z');

describe('fixtures', () => {
  it('build documents that satisfy flow_run.schema.json', () => {
    const runs = [
      makeFlowRun(),
      makeFlowRun({ scope: { symbol: 'BTC/USDT', timeframes: ['1M', '1w'] }, suffix: 'x9z' }),
      makeFlowRun({ steps: makeParallelSteps(5), status: 'PENDING' }),
      makeFlowRun({ steps: { ...defaultSteps(), extra: makeStep({ status: 'SKIPPED' }) } }),
    ];
    for (const run of runs) expect(validate.flowRun(run)).toEqual({ ok: true, value: run });
    expect(makeRunId({ at: '2026-12-31T23:59:58.123Z', symbol: 'ETH/USD', suffix: 'q1w2' })).toBe(
      '20261231-235958_ETH-USD_q1w2',
    );
  });
});

describe('prepareNewRun', () => {
  it('stamps updatedAt and returns a detached copy', () => {
    const run = makeFlowRun();
    const stored = prepareNewRun(run, now);
    expect(stored).toEqual({ ...run, updatedAt: now.toISOString() });
    stored.steps['ohlcv_export:1d'] = makeStep({ status: 'FAILED' });
    expect(run.steps['ohlcv_export:1d']?.status).toBe('READY');
  });

  it('normalises -0 and drops undefined properties', () => {
    const run = makeFlowRun({
      steps: { a: makeStep({ inputs: { zero: -0, gone: undefined, list: [{ x: undefined }] } }) },
    });
    const inputs = prepareNewRun(run, now).steps['a']?.inputs;
    expect(inputs).toEqual({ zero: 0, list: [{}] });
    expect(Object.is(inputs?.['zero'], -0)).toBe(false);
  });

  it.each([
    ['a Date', { when: new Date(0) }, 'Date'],
    ['a nested array', { grid: [[1]] }, 'array'],
    ['an undefined array item', { list: [undefined] }, 'undefined array item'],
    ['Infinity', { n: Number.POSITIVE_INFINITY }, 'finite'],
    ['a reserved key', { __name__: 1 }, 'reserved'],
    ['an empty key', { '': 1 }, 'empty field name'],
    ['a Map', { m: new Map() }, 'Map'],
    ['a bigint', { b: 1n }, 'bigint'],
  ])('rejects %s inside the document', (_label, inputs, message) => {
    const run = makeFlowRun({ steps: { a: makeStep({ inputs }) } });
    expect(() => prepareNewRun(run, now)).toThrow(InvalidRunDocumentError);
    expect(() => prepareNewRun(run, now)).toThrow(message);
  });
});

describe('readRunDocument (lenient read)', () => {
  it('accepts unknown fields anywhere and returns them untouched', () => {
    const run = makeFlowRun({
      status: 'FAILED',
      error: { code: 'RUN_TIMEOUT', message: 'late', retryable: false },
    });
    const doc = {
      ...run,
      extraTop: 1,
      error: { ...run.error, extraInError: true },
      steps: { a: { ...makeStep(), extraInStep: 'x', error: { ...run.error, hint: 1 } } },
    };
    expect(readRunDocument(run.runId, doc)).toBe(doc);
  });

  it('rejects missing required fields and other violations, naming the field', () => {
    const { steps: _steps, ...noSteps } = makeFlowRun();
    expect(() => readRunDocument('r', noSteps)).toThrow(/steps/);
    const badStatus = { ...makeFlowRun(), status: 'DONE', extra: 1 };
    const error = (() => {
      try {
        readRunDocument('r', badStatus);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRunDocumentError);
    expect(error).toMatchObject({ code: 'FLOW_RUN_INVALID', details: { runId: 'r' } });
  });

  it("leaves a step's inputs problems to its worker, but creates only runs with valid inputs", () => {
    const run = makeFlowRun({
      steps: {
        'charts:1d:ctpl_default_v1': makeStep({
          stepType: 'CHART_EXPORT',
          inputs: { ohlcvStepId: 'ohlcv_export:1d', requests: [], typo: true },
        }),
      },
    });
    expect(readRunDocument(run.runId, run)).toBe(run);
    expect(() => prepareNewRun(run, new Date())).toThrow(
      /steps\/charts:1d:ctpl_default_v1\/inputs/,
    );
  });

  it('fails closed when unknown fields fill the capped issue list', () => {
    const extras = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`extra${i}`, i]));
    const error: ErrorInfo = { code: 'RUN_TIMEOUT', message: 'late', retryable: false };
    const noisyError = Object.assign({ ...error }, extras);
    // Step 'a' is checked first; its noise fills the capped list and hides step 'b's bad status.
    const doc = {
      ...makeFlowRun(),
      steps: {
        a: makeStep({ status: 'FAILED', error: noisyError }),
        b: { ...makeStep(), status: 'NOPE' },
      },
    };
    expect(() => readRunDocument(doc.runId, doc)).toThrow(InvalidRunDocumentError);
  });
});

describe('prepareRunPatch', () => {
  it('stamps updatedAt over the caller value and keeps FIELD_DELETE at the top level', () => {
    expect(
      prepareRunPatch(
        'r',
        {
          updatedAt: 'x',
          'steps.a.lease': FIELD_DELETE,
          'steps.a.status': 'RUNNING',
          skip: undefined,
        },
        now,
      ),
    ).toEqual({
      'steps.a.lease': FIELD_DELETE,
      'steps.a.status': 'RUNNING',
      updatedAt: now.toISOString(),
    });
  });

  it.each([
    ['a parent and a child path', { 'steps.a': {}, 'steps.a.status': 'X' }, 'conflicts'],
    ['a child of the stamped updatedAt', { 'updatedAt.x': 1 }, 'conflicts'],
    ['an empty segment', { 'steps..status': 'X' }, 'empty path segment'],
    ['a trailing dot', { 'steps.a.': 'X' }, 'empty path segment'],
    ['a reserved segment', { 'steps.__a__.status': 'X' }, 'reserved'],
    ['a nested FIELD_DELETE', { 'steps.a': { lease: FIELD_DELETE } }, 'symbol'],
    ['a Date', { 'steps.a.readyAt': new Date() }, 'Date'],
  ])('rejects %s', (_label, patch, message) => {
    expect(() => prepareRunPatch('r', patch, now)).toThrow(InvalidRunPatchError);
    expect(() => prepareRunPatch('r', patch, now)).toThrow(message);
  });
});

describe('patchedRunIsValid', () => {
  const STEP = 'ohlcv_export:1d';
  const value = fc.oneof(
    fc.constantFrom('READY', 'RUNNING', 'SUCCEEDED', 'NOT_A_STATUS', '2026-05-05T05:05:05Z', ''),
    fc.integer({ min: -2, max: 3 }),
    fc.constant({ owner: 'w', expiresAt: '2026-05-05T05:05:05Z' }),
    fc.constant({ code: 'INTERNAL_ERROR', message: 'x', retryable: false }),
    fc.constant(makeStep({ status: 'PENDING', dependsOn: [STEP] })),
    fc.constant(FIELD_DELETE),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const path = fc.constantFrom(
    'status',
    'finishedAt',
    'error',
    'progress',
    `steps.${STEP}.status`,
    `steps.${STEP}.attempt`,
    `steps.${STEP}.lease`,
    `steps.${STEP}.outputs.gcs_uri`,
    `steps.${STEP}.inputs.symbol`,
    'steps.llm_report:1d:prompt_day_v1.error',
    'steps.new_step:1d',
    'steps.BAD ID',
  );

  it('agrees with a full validation of the patched run (the schema relates no step to another)', () => {
    fc.assert(
      fc.property(fc.dictionary(path, value, { maxKeys: 4 }), (raw) => {
        let stored;
        try {
          stored = prepareRunPatch(makeFlowRun().runId, raw, now);
        } catch {
          return; // a patch the store refuses never reaches the document
        }
        const next = applyPatchShared(deepFreeze(makeFlowRun()), stored);
        const full = validate.flowRun(next).ok;
        const partial = patchedRunIsValid(next, stored);
        // A step deleted or the map replaced: not judged in part (false), validated in full.
        const judged = !Object.entries(stored).some(
          ([p, v]) => p === 'steps' || (v === FIELD_DELETE && /^steps\.[^.]+$/.test(p)),
        );
        if (judged) expect(partial).toBe(full);
        else expect(partial).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('relies on a schema whose run and step map have no cross-field rules', () => {
    const schema = JSON.parse(
      readFileSync(join(__dirname, '../../../contracts/flow_run.schema.json'), 'utf8'),
    ) as Record<string, unknown>;
    const combinators = ['allOf', 'anyOf', 'oneOf', 'if', 'not', 'dependentRequired'];
    const steps = (schema['properties'] as Record<string, Record<string, unknown>>)['steps'];
    expect(combinators.filter((k) => k in schema)).toEqual([]);
    expect(Object.keys(steps ?? {}).sort()).toEqual(
      ['additionalProperties', 'minProperties', 'propertyNames', 'type'].sort(),
    );
  });
});
