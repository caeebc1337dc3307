import { randomBytes } from 'node:crypto';
import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../artifact-store.port';
import {
  ArtifactConflictError,
  ArtifactNotFoundError,
  InvalidArtifactRequestError,
  InvalidArtifactUriError,
} from '../artifacts.errors';
import { sha256Hex } from '../content-hash';

export interface ArtifactStoreConformanceHandle {
  store: ArtifactStore;
  /** A bucket the store can write to (the suite uses it and `<bucket>-other`). */
  bucket: string;
  cleanup?: () => Promise<void>;
}

const JSON_TYPE = { contentType: 'application/json' };
const PNG_TYPE = { contentType: 'image/png' };

/** Every byte value, so encodings that are not binary-safe show up. */
const BINARY = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

/**
 * The behaviour every ArtifactStore adapter must share (create-only puts, idempotent re-puts,
 * conflicts, not-found, uri validation, concurrency). `open` is called before each test and
 * may return a shared backend: the suite uses unique object names.
 */
export function describeArtifactStoreConformance(
  name: string,
  open: () => Promise<ArtifactStoreConformanceHandle>,
): void {
  describe(`ArtifactStore conformance: ${name}`, () => {
    let handle: ArtifactStoreConformanceHandle;
    let store: ArtifactStore;
    const uriFor = (suffix: string): string =>
      `gs://${handle.bucket}/conformance/${randomBytes(6).toString('hex')}/${suffix}`;

    beforeEach(async () => {
      handle = await open();
      store = handle.store;
    });

    afterEach(async () => {
      await handle.cleanup?.();
    });

    it('creates a new object and reads the same bytes back', async () => {
      const uri = uriFor('charts:1d.ctpl_default_v1.png');
      const result = await store.put(uri, BINARY, PNG_TYPE);
      expect(result).toEqual({
        uri,
        created: true,
        sha256: sha256Hex(BINARY),
        bytes: BINARY.length,
      });
      const read = await store.read(uri);
      expect(Buffer.isBuffer(read)).toBe(true);
      expect(read.equals(BINARY)).toBe(true);
    });

    it('treats a re-put of identical bytes as an idempotent success (created:false)', async () => {
      const uri = uriFor('ohlcv_export:1M.json');
      const data = Buffer.from('{"candles":[1,2,3]}');
      await store.put(uri, data, JSON_TYPE);
      const again = await store.put(uri, Buffer.from(data), JSON_TYPE);
      expect(again).toEqual({ uri, created: false, sha256: sha256Hex(data), bytes: data.length });
      expect((await store.read(uri)).equals(data)).toBe(true);
    });

    it('rejects different bytes under an existing name with a non-retryable CONFLICT', async () => {
      const uri = uriFor('llm_report:1w.json');
      const original = Buffer.from('{"v":1}');
      const other = Buffer.from('{"v":2}');
      await store.put(uri, original, JSON_TYPE);
      const error = await rejectionOf(store.put(uri, other, JSON_TYPE));
      expect(error).toBeInstanceOf(ArtifactConflictError);
      expect(error).toMatchObject({
        code: 'CONFLICT',
        retryable: false,
        details: {
          uri,
          reason: 'different-bytes',
          attemptedSha256: sha256Hex(other),
          existingSha256: sha256Hex(original),
        },
      });
      expect((await store.read(uri)).equals(original)).toBe(true);
    });

    it('reports existence before and after a put', async () => {
      const uri = uriFor('x.json');
      await expect(store.exists(uri)).resolves.toBe(false);
      await store.put(uri, Buffer.from('{}'), JSON_TYPE);
      await expect(store.exists(uri)).resolves.toBe(true);
    });

    it('answers NOT_FOUND for read and signedUrl of a missing object', async () => {
      const uri = uriFor('missing.json');
      const readError = await rejectionOf(store.read(uri));
      expect(readError).toBeInstanceOf(ArtifactNotFoundError);
      expect(readError).toMatchObject({ code: 'NOT_FOUND', retryable: false });
      await expect(store.signedUrl(uri, { expiresInSeconds: 60 })).rejects.toBeInstanceOf(
        ArtifactNotFoundError,
      );
    });

    it('does not treat a name prefix ("directory") as an object', async () => {
      const dir = uriFor('nested');
      await store.put(`${dir}/a.json`, Buffer.from('{"a":1}'), JSON_TYPE);
      await store.put(`${dir}/b.json`, Buffer.from('{"b":1}'), JSON_TYPE);
      await expect(store.exists(dir)).resolves.toBe(false);
      await expect(store.read(dir)).rejects.toBeInstanceOf(ArtifactNotFoundError);
      expect((await store.read(`${dir}/a.json`)).toString()).toBe('{"a":1}');
      expect((await store.read(`${dir}/b.json`)).toString()).toBe('{"b":1}');
    });

    it('stores an empty object', async () => {
      const uri = uriFor('empty.json');
      const empty = Buffer.alloc(0);
      await expect(store.put(uri, empty, JSON_TYPE)).resolves.toMatchObject({
        created: true,
        bytes: 0,
      });
      expect((await store.read(uri)).length).toBe(0);
      await expect(store.put(uri, empty, JSON_TYPE)).resolves.toMatchObject({ created: false });
      await expect(store.put(uri, Buffer.from('x'), JSON_TYPE)).rejects.toBeInstanceOf(
        ArtifactConflictError,
      );
    });

    it('creates exactly once when the same bytes are put concurrently', async () => {
      const uri = uriFor('race.json');
      const data = Buffer.from('{"same":"bytes"}');
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store.put(uri, Buffer.from(data), JSON_TYPE)),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(results.filter((r) => !r.created)).toHaveLength(7);
      expect((await store.read(uri)).equals(data)).toBe(true);
    });

    it('lets exactly one of several concurrent different writers win', async () => {
      const uri = uriFor('race-different.json');
      const payloads = Array.from({ length: 6 }, (_, i) => Buffer.from(`{"writer":${i}}`));
      const settled = await Promise.allSettled(
        payloads.map((data) => store.put(uri, data, JSON_TYPE)),
      );
      const winners = settled.flatMap((s, i) =>
        s.status === 'fulfilled' ? [{ index: i, result: s.value }] : [],
      );
      expect(winners).toHaveLength(1);
      expect(winners[0]?.result.created).toBe(true);
      for (const s of settled) {
        if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(ArtifactConflictError);
      }
      const stored = await store.read(uri);
      expect(stored.equals(payloads[winners[0]?.index ?? -1] ?? Buffer.alloc(0))).toBe(true);
    });

    it('keeps buckets apart', async () => {
      const path = `conformance/${randomBytes(6).toString('hex')}/same.json`;
      await store.put(`gs://${handle.bucket}/${path}`, Buffer.from('{"b":1}'), JSON_TYPE);
      await expect(store.exists(`gs://${handle.bucket}-other/${path}`)).resolves.toBe(false);
    });

    it.each([
      'https://storage.googleapis.com/b/o',
      'gs://bucket',
      'gs://bucket/',
      'gs://Bad_Bucket!/a.json',
      'gs://bucket//a.json',
      'gs://bucket/a/',
      'gs://bucket/../escape.json',
      'gs://bucket/a/../../../etc/passwd',
      'gs://bucket/a/./b.json',
      'gs://bucket/a\u0000b.json',
      'gs://bucket/line\nbreak.json',
    ])('rejects the invalid uri %j on every method', async (uri) => {
      const calls: Array<Promise<unknown>> = [
        store.put(uri, Buffer.from('{}'), JSON_TYPE),
        store.read(uri),
        store.exists(uri),
        store.signedUrl(uri, { expiresInSeconds: 60 }),
      ];
      for (const call of calls) {
        const error = await rejectionOf(call);
        expect(error).toBeInstanceOf(InvalidArtifactUriError);
        expect(error).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
      }
    });

    it('rejects bad put options and signed-url expiries without writing', async () => {
      const uri = uriFor('options.json');
      await expect(store.put(uri, Buffer.from('{}'), { contentType: '' })).rejects.toBeInstanceOf(
        InvalidArtifactRequestError,
      );
      await expect(store.exists(uri)).resolves.toBe(false);
      await store.put(uri, Buffer.from('{}'), JSON_TYPE);
      for (const expiresInSeconds of [0, -1, 1.5, 8 * 24 * 3600]) {
        await expect(store.signedUrl(uri, { expiresInSeconds })).rejects.toBeInstanceOf(
          InvalidArtifactRequestError,
        );
      }
    });

    it('returns a parseable url for an existing object', async () => {
      const uri = uriFor('signed.json');
      await store.put(uri, Buffer.from('{}'), JSON_TYPE);
      const url = new URL(await store.signedUrl(uri, { expiresInSeconds: 300 }));
      expect(decodeURIComponent(url.pathname)).toContain('signed.json');
    });
  });
}
