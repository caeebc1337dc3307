import { describe, expect, it } from 'vitest';
import {
  ArtifactConflictError,
  ArtifactNotFoundError,
  InvalidArtifactRequestError,
  InvalidArtifactUriError,
} from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { InMemoryArtifactStore } from './in-memory-artifact.store';

const URI = 'gs://tda-artifacts/runs/r1/1M/ohlcv_export:1M.json';
const JSON_TYPE = { contentType: 'application/json' };

describe('InMemoryArtifactStore', () => {
  it('creates, re-puts identical bytes idempotently and rejects different bytes', async () => {
    const store = new InMemoryArtifactStore();
    const data = Buffer.from('{"a":1}');
    await expect(store.put(URI, data, JSON_TYPE)).resolves.toEqual({
      uri: URI,
      created: true,
      sha256: sha256Hex(data),
      bytes: data.length,
    });
    await expect(store.put(URI, Buffer.from('{"a":1}'), JSON_TYPE)).resolves.toMatchObject({
      created: false,
    });
    const conflict = store.put(URI, Buffer.from('{"a":2}'), JSON_TYPE);
    await expect(conflict).rejects.toBeInstanceOf(ArtifactConflictError);
    await expect(conflict).rejects.toMatchObject({ code: 'CONFLICT', retryable: false });
    expect((await store.read(URI)).toString()).toBe('{"a":1}');
    expect(store.contentTypeOf(URI)).toBe('application/json');
  });

  it('copies buffers in and out', async () => {
    const store = new InMemoryArtifactStore();
    const data = Buffer.from('abc');
    await store.put(URI, data, JSON_TYPE);
    data.write('x');
    const read = await store.read(URI);
    read.write('y');
    expect((await store.read(URI)).toString()).toBe('abc');
  });

  it('reports missing objects and invalid input', async () => {
    const store = new InMemoryArtifactStore();
    await expect(store.read(URI)).rejects.toBeInstanceOf(ArtifactNotFoundError);
    await expect(store.exists(URI)).resolves.toBe(false);
    await expect(store.exists('gs://bucket/../x')).rejects.toBeInstanceOf(InvalidArtifactUriError);
    await expect(store.put(URI, Buffer.from('a'), { contentType: '' })).rejects.toBeInstanceOf(
      InvalidArtifactRequestError,
    );
    expect(store.list()).toEqual([]);
  });

  it('signs only existing objects with a bounded expiry', async () => {
    const store = new InMemoryArtifactStore();
    await expect(store.signedUrl(URI, { expiresInSeconds: 60 })).rejects.toBeInstanceOf(
      ArtifactNotFoundError,
    );
    await store.put(URI, Buffer.from('a'), JSON_TYPE);
    await expect(store.signedUrl(URI, { expiresInSeconds: 60 })).resolves.toBe(
      'memory://tda-artifacts/runs/r1/1M/ohlcv_export%3A1M.json?expiresInSeconds=60',
    );
    await expect(store.signedUrl(URI, { expiresInSeconds: 0 })).rejects.toBeInstanceOf(
      InvalidArtifactRequestError,
    );
  });
});
