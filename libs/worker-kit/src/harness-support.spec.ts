import {
  ArtifactConflictError,
  ArtifactWriteError,
  InMemoryArtifactStore,
  InvalidArtifactUriError,
} from '@tda/artifacts';
import { describe, expect, it } from 'vitest';
import { abortableSleep, settleOrAbort } from './abortable';
import { contentTypeForUri, stepArtifactUri } from './artifact-naming';
import {
  classifyArtifactError,
  resultProblem,
  safeName,
  writeStepArtifacts,
} from './artifact-writer';
import { DEFAULT_HARNESS_POLICY, HarnessConfigError, resolveHarnessPolicy } from './harness-policy';
import { toHandlerOutcome } from './harness-outcome';
import { exponentialDelayMs } from './retry';
import { LLM_REPORT_STEP, OHLCV_EXPORT_STEP } from '@tda/step-types';

const RUN_ID = '20260115-100000_BTC-USDT_abc';

describe('resolveHarnessPolicy', () => {
  it('defaults to the production values (lease 60 s, heartbeat 15 s, 3 tries of 1 s/2 s/4 s)', () => {
    expect(resolveHarnessPolicy()).toEqual(DEFAULT_HARNESS_POLICY);
    expect(DEFAULT_HARNESS_POLICY).toMatchObject({
      leaseMs: 60_000,
      heartbeatMs: 15_000,
      handlerMaxTries: 3,
      maxDeliveryAttempts: 10,
    });
    expect([1, 2, 3, 4].map((n) => exponentialDelayMs(n, 1_000, 4_000))).toEqual([
      1_000, 2_000, 4_000, 4_000,
    ]);
  });

  it('takes the step-level defaults from the step type descriptor policy', () => {
    expect(resolveHarnessPolicy({}, OHLCV_EXPORT_STEP.policy)).toEqual(DEFAULT_HARNESS_POLICY);
    expect(resolveHarnessPolicy({}, LLM_REPORT_STEP.policy)).toEqual({
      ...DEFAULT_HARNESS_POLICY,
      timeoutMs: 780_000,
    });
    expect(resolveHarnessPolicy({ timeoutMs: 9_000 }, LLM_REPORT_STEP.policy).timeoutMs).toBe(
      9_000,
    );
    expect(DEFAULT_HARNESS_POLICY).toMatchObject({
      timeoutMs: 120_000,
      maxAttempts: 3,
      handlerRetryBaseDelayMs: 1_000,
      handlerRetryMaxDelayMs: 4_000,
    });
  });

  it.each([
    [{ maxAttempts: 0 }, /maxAttempts must be a positive number/],
    [{ maxAttempts: 2.5 }, /maxAttempts must be an integer/],
    [{ heartbeatMs: 60_000 }, /shorter than leaseMs/],
    [{ leaseMs: 0 }, /leaseMs must be a positive number/],
    [{ handlerRetryBaseDelayMs: -1 }, /non-negative/],
    [{ artifactBucket: 'Bad_Bucket!' }, /bucket name/],
    [{ artifactPrefix: '/runs/' }, /artifactPrefix/],
    [{ primaryArtifactSuffix: 'json' }, /must look like/],
  ])('refuses %o', (overrides, message) => {
    expect(() => resolveHarnessPolicy(overrides)).toThrow(HarnessConfigError);
    expect(() => resolveHarnessPolicy(overrides)).toThrow(message);
  });
});

describe('artifact naming', () => {
  it('builds the seed-002 name, with "_" for steps without a timeframe', () => {
    const base = { bucket: 'tda-artifacts', prefix: 'runs', runId: RUN_ID };
    expect(stepArtifactUri({ ...base, stepId: 'ohlcv_export:1M', timeframe: '1M' }, '.json')).toBe(
      `gs://tda-artifacts/runs/${RUN_ID}/1M/ohlcv_export:1M.json`,
    );
    expect(stepArtifactUri({ ...base, stepId: 'llm_reco:v1' }, '.json')).toBe(
      `gs://tda-artifacts/runs/${RUN_ID}/_/llm_reco:v1.json`,
    );
    expect(() => stepArtifactUri({ ...base, stepId: 'a/b' }, '.json')).toThrow();
    expect(() => stepArtifactUri({ ...base, stepId: 'a' }, '/../x')).toThrow();
  });

  it('guesses content types from the extension only', () => {
    expect(contentTypeForUri('gs://bkt/runs/x/1d/s.json')).toBe('application/json');
    expect(contentTypeForUri('gs://bkt/runs/x/1d/s.tpl.PNG')).toBe('image/png');
    expect(contentTypeForUri('gs://bkt/runs/x.d/1d/noext')).toBe('application/octet-stream');
  });
});

describe('artifact errors and results', () => {
  it('classifies conflicts, adapter errors and foreign errors', () => {
    const conflict = new ArtifactConflictError('gs://bkt/x', {
      reason: 'different-bytes',
      attemptedSha256: 'a',
    });
    expect(classifyArtifactError(conflict)).toMatchObject({ conflict: true, retryable: false });
    expect(classifyArtifactError(new ArtifactWriteError('gs://bkt/x', '503'))).toMatchObject({
      conflict: false,
      retryable: true,
    });
    expect(classifyArtifactError(new InvalidArtifactUriError('x', 'bad'))).toMatchObject({
      retryable: false,
    });
    expect(
      classifyArtifactError(Object.assign(new Error('x'), { code: 'NOT_FOUND' })),
    ).toMatchObject({ retryable: false });
    expect(classifyArtifactError(new Error('ECONNRESET'))).toMatchObject({ retryable: true });
  });

  it('names errors by class, never by message', () => {
    expect(safeName(new TypeError('secret'))).toBe('TypeError');
    class CustomFailure extends Error {}
    expect(safeName(new CustomFailure('secret'))).toBe('CustomFailure');
    expect(safeName(Object.assign(new Error('x'), { name: 'has spaces and <html>' }))).toBe(
      'Error',
    );
    expect(safeName('a string')).toBe('string');
  });

  it('rejects malformed results before writing anything', () => {
    const uri = `gs://bkt/runs/${RUN_ID}/1d/s.json`;
    expect(resultProblem({ artifacts: [], primaryUri: 'file:///etc/passwd' })).toMatch(/gs:\/\//);
    expect(
      resultProblem({
        artifacts: [
          { uri, data: Buffer.from('a'), contentType: 'application/json' },
          { uri, data: Buffer.from('a'), contentType: 'application/json' },
        ],
        primaryUri: uri,
      }),
    ).toMatch(/listed twice/);
    expect(resultProblem({ artifacts: [], primaryUri: uri })).toBeUndefined();
  });

  it('writes the primary last', async () => {
    const order: string[] = [];
    const inner = new InMemoryArtifactStore();
    const artifacts = {
      put: (uri: string, data: Buffer, options: { contentType: string }) => {
        order.push(uri);
        return inner.put(uri, data, options);
      },
      read: (uri: string) => inner.read(uri),
      exists: (uri: string) => inner.exists(uri),
      signedUrl: (uri: string, o: { expiresInSeconds: number }) => inner.signedUrl(uri, o),
    };
    const primary = 'gs://bkt/runs/p.json';
    const outcome = await writeStepArtifacts(
      {
        artifacts: [
          { uri: primary, data: Buffer.from('{}'), contentType: 'application/json' },
          { uri: 'gs://bkt/runs/a.png', data: Buffer.from('a'), contentType: 'image/png' },
          { uri: 'gs://bkt/runs/b.png', data: Buffer.from('b'), contentType: 'image/png' },
        ],
        primaryUri: primary,
      },
      { artifacts, maxTries: 1, baseDelayMs: 0, sleep: abortableSleep },
    );
    expect(outcome).toMatchObject({
      kind: 'written',
      created: 3,
      primary: { gcs_uri: primary, bytes: 2 },
    });
    expect(order).toEqual(['gs://bkt/runs/a.png', 'gs://bkt/runs/b.png', primary]);
  });
});

describe('abortable helpers', () => {
  it('settleOrAbort returns on abort without waiting for the call, and swallows its late failure', async () => {
    const controller = new AbortController();
    let rejectLate: (error: Error) => void = () => undefined;
    const pending = settleOrAbort(
      () =>
        new Promise<never>((_resolve, reject) => {
          rejectLate = reject;
        }),
      controller.signal,
    );
    controller.abort({ kind: 'deadline' });
    expect(await pending).toEqual({ kind: 'aborted', reason: { kind: 'deadline' } });
    rejectLate(new Error('late'));
  });

  it('settleOrAbort reports synchronous throws as errors', async () => {
    const settled = await settleOrAbort(() => {
      throw new RangeError('sync');
    }, new AbortController().signal);
    expect(settled).toMatchObject({ kind: 'error', error: { name: 'RangeError' } });
  });

  it('abortableSleep resolves false when aborted', async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(10_000, controller.signal);
    controller.abort();
    expect(await sleeping).toBe(false);
    expect(await abortableSleep(1)).toBe(true);
  });
});

describe('toHandlerOutcome', () => {
  it('maps every harness outcome to an ack outcome of the transport', () => {
    expect(toHandlerOutcome({ action: 'ack', kind: 'noop', reason: 'not_ready' })).toEqual({
      outcome: 'noop',
      reason: 'not_ready',
    });
    expect(
      toHandlerOutcome({ action: 'ack', kind: 'invalid', reason: 'invalid_message', issues: [] }),
    ).toEqual({ outcome: 'invalid', reason: 'invalid_message', issues: [] });
    expect(
      toHandlerOutcome({
        action: 'ack',
        kind: 'failed',
        status: 'FAILED',
        errorCode: 'STEP_TIMEOUT',
      }),
    ).toEqual({ outcome: 'processed', detail: 'failed:FAILED:STEP_TIMEOUT' });
  });
});
