import { describe, expect, it } from 'vitest';
import { InvalidArtifactRequestError, InvalidArtifactUriError } from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { NO_TIMEFRAME_SEGMENT, artifactUri, formatGcsUri, parseGcsUri } from './gcs-uri';

const RUN_ID = '20260301-120000_BTCUSDT_abc123';

describe('parseGcsUri / formatGcsUri', () => {
  it('splits bucket and path and round-trips', () => {
    const location = parseGcsUri('gs://tda-artifacts/runs/r/1M/ohlcv_export:1M.json');
    expect(location).toEqual({ bucket: 'tda-artifacts', path: 'runs/r/1M/ohlcv_export:1M.json' });
    expect(formatGcsUri(location)).toBe('gs://tda-artifacts/runs/r/1M/ohlcv_export:1M.json');
  });

  it.each([
    ['', "scheme must be 'gs://'"],
    ['s3://bucket/a', "scheme must be 'gs://'"],
    ['gs://bucket', 'missing object path'],
    ['gs://bucket/', 'empty object path'],
    ['gs://Bucket/a', 'invalid bucket name'],
    ['gs://b/a', 'invalid bucket name'],
    ['gs://-bucket/a', 'invalid bucket name'],
    ['gs://bucket//a', 'empty path segment'],
    ['gs://bucket/a/', 'empty path segment'],
    ['gs://bucket/a//b', 'empty path segment'],
    ['gs://bucket/../a', "'..' path segment"],
    ['gs://bucket/a/../../etc/passwd', "'..' path segment"],
    ['gs://bucket/a/./b', "'.' path segment"],
    ['gs://bucket/a\u0000b', 'control character'],
    ['gs://bucket/a\nb', 'control character'],
    ['gs://bucket/a\u007fb', 'control character'],
    [`gs://bucket/${'x'.repeat(1025)}`, 'longer than 1024 bytes'],
  ])('rejects %j (%s)', (uri, reason) => {
    let caught: unknown;
    try {
      parseGcsUri(uri);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidArtifactUriError);
    expect(caught).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect((caught as InvalidArtifactUriError).reason).toContain(reason);
  });

  it('accepts dots inside segments and unicode', () => {
    expect(parseGcsUri('gs://bucket/a..b/.hidden/ü.json').path).toBe('a..b/.hidden/ü.json');
  });
});

describe('artifactUri', () => {
  it('builds the seed 002 name with a .json default suffix', () => {
    expect(
      artifactUri({
        bucket: 'tda-artifacts',
        prefix: 'runs',
        runId: RUN_ID,
        timeframe: '1M',
        stepId: 'ohlcv_export:1M',
      }),
    ).toBe(`gs://tda-artifacts/runs/${RUN_ID}/1M/ohlcv_export:1M.json`);
  });

  it('uses the fixed segment for steps without a timeframe and honours the suffix', () => {
    expect(NO_TIMEFRAME_SEGMENT).toBe('_');
    expect(
      artifactUri({
        bucket: 'tda-artifacts',
        prefix: 'env/runs',
        runId: RUN_ID,
        stepId: 'account_export',
        suffix: '.ctpl_default_v1.png',
      }),
    ).toBe(`gs://tda-artifacts/env/runs/${RUN_ID}/_/account_export.ctpl_default_v1.png`);
  });

  it.each([
    [{ runId: 'not a run id' }, 'runId'],
    [{ stepId: '../evil' }, 'stepId'],
    [{ stepId: 'a/b' }, 'stepId'],
    [{ timeframe: '2h' }, 'timeframe'],
    [{ suffix: 'json' }, 'suffix'],
    [{ suffix: './x' }, 'suffix'],
    [{ prefix: '../up' }, "'..' path segment"],
    [{ prefix: '' }, 'empty path segment'],
    [{ bucket: 'UPPER' }, 'invalid bucket name'],
  ])('rejects bad parts %j', (override, mentioned) => {
    const build = () =>
      artifactUri({
        bucket: 'tda-artifacts',
        prefix: 'runs',
        runId: RUN_ID,
        timeframe: '1d',
        stepId: 'charts:1d',
        ...override,
      });
    expect(build).toThrow(InvalidArtifactRequestError);
    expect(build).toThrow(mentioned);
  });
});

describe('sha256Hex', () => {
  it('is the hex SHA-256 of the bytes', () => {
    expect(sha256Hex(Buffer.from('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
