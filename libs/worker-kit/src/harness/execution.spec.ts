import { validate } from '@tda/contracts';
import { MarketDataUnavailableError } from '@tda/market-data';
import { describe, expect, it } from 'vitest';
import { StepError, StepInputError } from '../step-errors';
import { jsonResult, TestStepHandler, testStepType } from '../testing';
import { first, harnessFixtures, OHLCV, T0 } from '../testing/harness-fixture';

const fixture = harnessFixtures();

describe('StepHarness — handler failures', () => {
  it('inputs that violate the step type inputs schema → FAILED INVALID_STEP_INPUTS naming the schema path, never executed', async () => {
    const handler = new TestStepHandler(
      testStepType('OHLCV_EXPORT', {
        inputs: { contract: 'ohlcv_export_inputs', validate: validate.ohlcvExportInputs },
      }),
    );
    const f = await fixture({ handler });
    // A run is only created with valid inputs: these arrive later (an edit, an older catalogue).
    await f.writeAsOther({ [`steps.${OHLCV}.inputs`]: { lookback: 5000, symbol: 'BTC USDT' } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(handler.executions).toBe(0);
    expect(f.artifacts.puts).toBe(0);
    const error = (await f.step(OHLCV)).error;
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: {
        contract: 'ohlcv_export_inputs',
        issues: expect.arrayContaining([
          expect.objectContaining({ path: '/lookback', keyword: 'maximum' }),
          expect.objectContaining({ path: '/symbol', keyword: 'pattern' }),
        ]),
      },
    });
    expect(error?.message).toMatch(
      /^inputs of ohlcv_export:1d violate ohlcv_export_inputs\.schema\.json: \/(lookback|symbol) /,
    );
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'FAILED']);
  });

  it('a StepInputError from the handler (a domain check) → FAILED INVALID_STEP_INPUTS, not retried', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepInputError('inputs.symbol is missing', { field: 'symbol' });
    };
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(handler.executions).toBe(1);
    expect((await f.step(OHLCV)).error).toEqual({
      code: 'INVALID_STEP_INPUTS',
      message: 'inputs.symbol is missing',
      retryable: false,
      details: { field: 'symbol' },
    });
  });

  it('a retryable StepError twice, then success → SUCCEEDED after 3 tries', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => {
      if (handler.executions < 3) throw new StepError('MARKET_DATA_UNAVAILABLE', 'exchange 503');
      return jsonResult(ctx);
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', tries: 3, attempt: 1 });
    expect(handler.executions).toBe(3);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.log.withEvent('step_retry').filter((r) => r['willRetry'] === true)).toHaveLength(2);
  });

  it('a retryable StepError on every try → FAILED with that code after handlerMaxTries', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503');
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_UNAVAILABLE', tries: 3 });
    expect(handler.executions).toBe(3);
    expect((await f.step(OHLCV)).error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      details: { tries: 3 },
    });
  });

  it("a StepError's execution section is persisted with the failure (last try; timing stays the harness's)", async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503', {
        execution: {
          llm: { attempts: { total: 1 }, calls: handler.executions },
          timing: { startedAt: '1999-01-01T00:00:00.000Z' },
        },
      });
    };
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    const step = await f.step(OHLCV);
    expect(step.status).toBe('FAILED');
    expect(step.outputs.execution).toEqual({
      llm: { attempts: { total: 1 }, calls: 3 },
      worker: 'worker-a',
      timing: {
        startedAt: new Date(T0).toISOString(),
        finishedAt: new Date(T0).toISOString(),
        durationMs: 0,
      },
    });
  });

  it('does not retry when the backoff would cross the deadline', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503');
    };
    const f = await fixture({
      handler,
      policy: { timeoutMs: 100, handlerRetryBaseDelayMs: 1_000, handlerRetryMaxDelayMs: 4_000 },
    });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_UNAVAILABLE', tries: 1 });
  });

  it('an unexpected exception → FAILED INTERNAL_ERROR without its raw message', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new TypeError('cannot read the PROMPT TEXT of the user');
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'INTERNAL_ERROR' });
    expect(handler.executions).toBe(1);
    const error = (await f.step(OHLCV)).error;
    expect(error).toMatchObject({ code: 'INTERNAL_ERROR', details: { errorClass: 'TypeError' } });
    expect(JSON.stringify(error)).not.toContain('PROMPT TEXT');
    expect(f.log.withEvent('step_failed')[0]).toMatchObject({
      errorCode: 'INTERNAL_ERROR',
      error: { name: 'TypeError' },
    });
  });

  it('a result with failure → FAILED with that code, the artifact still written', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({
      ...jsonResult(ctx, { images: 1 }),
      failure: { code: 'INVALID_STEP_INPUTS', message: 'only 1 of 2 charts rendered' },
    });
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(f.artifacts.created).toEqual([f.primaryUri(OHLCV)]);
    expect((await f.step(OHLCV)).outputs.execution?.artifact?.gcs_uri).toBe(f.primaryUri(OHLCV));
  });

  it('an invalid result (primary not written, unstorable outputs) fails the step clearly', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({ artifacts: [], primaryUri: ctx.artifactUri() });
    const f = await fixture({ handler });
    expect(await f.harness.handleStepReady(f.message(OHLCV), first)).toMatchObject({
      kind: 'failed',
      errorCode: 'INTERNAL_ERROR',
    });
    expect((await f.step(OHLCV)).error?.message).toContain('primary artifact');

    const badOutputs = new TestStepHandler();
    badOutputs.executeImpl = async (ctx) => ({ ...jsonResult(ctx), outputs: { 'a.b': 1 } });
    const g = await fixture({ handler: badOutputs });
    expect(await g.harness.handleStepReady(g.message(OHLCV), first)).toMatchObject({
      kind: 'failed',
      errorCode: 'INTERNAL_ERROR',
    });
    expect((await g.step(OHLCV)).error?.message).toContain('could not be stored');
  });
});

describe('StepHarness — what the handler returns is checked at the edge', () => {
  it('a primary artifact off its step type contract → FAILED INTERNAL_ERROR, nothing written', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({
      artifacts: [
        {
          uri: ctx.artifactUri(),
          data: Buffer.from('{"rows":[]}'),
          contentType: 'application/json',
        },
      ],
      primaryUri: ctx.artifactUri(),
    });
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ status: 'FAILED', errorCode: 'INTERNAL_ERROR' });
    expect(f.artifacts.puts).toBe(0);
    expect((await f.step(OHLCV)).error).toMatchObject({
      code: 'INTERNAL_ERROR',
      retryable: false,
      details: { contract: 'test_artifact' },
    });
    expect(handler.executions).toBe(1);
  });

  it('a primary artifact naming another step → FAILED INTERNAL_ERROR', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => jsonResult({ ...ctx, stepId: 'ohlcv_export:1w' });
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect((await f.step(OHLCV)).error?.message).toMatch(/names another run or step/);
  });

  it('a final retryable error is never retried in-process (its thrower already retried)', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503 after 3 tries', { final: true });
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ status: 'FAILED', errorCode: 'LLM_UNAVAILABLE', tries: 1 });
    expect(handler.executions).toBe(1);
    expect((await f.step(OHLCV)).error).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
  });

  it('any coded library error keeps its code: no per-handler translation', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new MarketDataUnavailableError(
        'no candles for BTC-USDT',
        { symbol: 'BTC-USDT' },
        { retryable: false },
      );
    };
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect((await f.step(OHLCV)).error).toEqual({
      code: 'MARKET_DATA_UNAVAILABLE',
      message: 'no candles for BTC-USDT',
      retryable: false,
      details: { symbol: 'BTC-USDT' },
    });
  });
});
