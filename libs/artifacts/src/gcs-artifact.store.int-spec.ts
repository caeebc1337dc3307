import { generateKeyPairSync } from 'node:crypto';
import { Storage } from '@google-cloud/storage';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ArtifactConflictError,
  ArtifactReadError,
  ArtifactSigningError,
  ArtifactWriteError,
} from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { GcsArtifactStore } from './gcs-artifact.store';
import {
  type FakeGcsServer,
  describeArtifactStoreConformance,
  startFakeGcsServer,
} from './testing';

const JSON_TYPE = { contentType: 'application/json' };
const BUCKET = 'tda-test-artifacts';

/**
 * A throwaway service-account key: signing is done locally with it, so signed URLs work with no
 * network and no real credentials. With a custom apiEndpoint the client sends API requests
 * unauthenticated (useAuthWithCustomEndpoint defaults to false), so no token is ever fetched.
 */
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const CREDENTIALS = {
  client_email: 'tda-test@test.iam.gserviceaccount.com',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
};

function storageFor(server: FakeGcsServer, credentials: object | undefined = CREDENTIALS): Storage {
  return new Storage({
    apiEndpoint: server.endpoint,
    projectId: 'test',
    ...(credentials === undefined ? {} : { credentials }),
    // one retry with the shortest backoff the client accepts (async-retry: min 1 s) keeps the
    // retry cases fast
    retryOptions: { maxRetries: 1, maxRetryDelay: 1, retryDelayMultiplier: 1, totalTimeout: 10 },
  });
}

describe('GcsArtifactStore against a fake GCS JSON API', () => {
  let server: FakeGcsServer;

  beforeAll(async () => {
    server = await startFakeGcsServer();
    // google-auth-library warns on every `credentials` option; the alternative (an explicit JWT
    // client) would need google-auth-library as a direct dependency. Other warnings pass through.
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      if (String(args[0]).startsWith('The `credentials` option is deprecated')) return;
      process.stderr.write(`${args.map(String).join(' ')}\n`);
    });
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await server.close();
  });

  describeArtifactStoreConformance('GcsArtifactStore (fake server)', async () => ({
    store: new GcsArtifactStore({ storage: storageFor(server) }),
    bucket: BUCKET,
  }));

  describe('protocol', () => {
    let store: GcsArtifactStore;

    beforeEach(() => {
      server.requests.length = 0;
      store = new GcsArtifactStore({ storage: storageFor(server) });
    });

    afterEach(() => {
      server.clearFaults();
    });

    it('uploads in one multipart request with ifGenerationMatch=0, md5 and sha256 metadata', async () => {
      const uri = `gs://${BUCKET}/protocol/runs/r1/1M/ohlcv_export:1M.json`;
      const data = Buffer.from('{"candles":[]}');
      await expect(store.put(uri, data, JSON_TYPE)).resolves.toMatchObject({ created: true });
      const uploads = server.requests.filter((r) => r.path.startsWith('/upload/'));
      expect(uploads).toEqual([
        {
          method: 'POST',
          path: `/upload/storage/v1/b/${BUCKET}/o`,
          query: expect.objectContaining({
            uploadType: 'multipart',
            name: 'protocol/runs/r1/1M/ohlcv_export:1M.json',
            ifGenerationMatch: '0',
          }),
        },
      ]);
      const stored = server.objects.get(`${BUCKET}/protocol/runs/r1/1M/ohlcv_export:1M.json`);
      expect(stored?.contentType).toBe('application/json');
      expect(stored?.metadata).toEqual({ sha256: sha256Hex(data) });
      expect(stored?.data.equals(data)).toBe(true);
    });

    it('answers a 412 with identical bytes as created:false after downloading the object', async () => {
      const uri = `gs://${BUCKET}/protocol/idempotent.json`;
      await store.put(uri, Buffer.from('{"x":1}'), JSON_TYPE);
      const generation = server.objects.get(`${BUCKET}/protocol/idempotent.json`)?.generation;
      server.requests.length = 0;
      await expect(store.put(uri, Buffer.from('{"x":1}'), JSON_TYPE)).resolves.toMatchObject({
        created: false,
      });
      expect(server.requests.map((r) => `${r.method} ${r.query['alt'] ?? ''}`)).toEqual([
        'POST ', // the upload, refused with 412
        'GET media', // the comparison download
      ]);
      // never overwritten
      expect(server.objects.get(`${BUCKET}/protocol/idempotent.json`)?.generation).toBe(generation);
    });

    it('answers a 412 with different bytes as a CONFLICT and keeps the object', async () => {
      const uri = `gs://${BUCKET}/protocol/conflict.json`;
      await store.put(uri, Buffer.from('{"x":1}'), JSON_TYPE);
      await expect(store.put(uri, Buffer.from('{"x":2}'), JSON_TYPE)).rejects.toBeInstanceOf(
        ArtifactConflictError,
      );
      expect(server.objects.get(`${BUCKET}/protocol/conflict.json`)?.data.toString()).toBe(
        '{"x":1}',
      );
    });

    it('retries a transient 503 and succeeds', async () => {
      server.failUploads(1, 503);
      const uri = `gs://${BUCKET}/protocol/retried.json`;
      await expect(store.put(uri, Buffer.from('{}'), JSON_TYPE)).resolves.toMatchObject({
        created: true,
      });
      expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
    });

    it('resolves a success whose response was lost: the retry gets 412 and compares', async () => {
      server.failUploads(1, 503, { commit: true });
      const uri = `gs://${BUCKET}/protocol/lost-response.json`;
      await expect(store.put(uri, Buffer.from('{"y":1}'), JSON_TYPE)).resolves.toMatchObject({
        created: false,
      });
      expect((await store.read(uri)).toString()).toBe('{"y":1}');
    });

    it('maps a persistent failure to a retryable GCS_WRITE_FAILED without the response text', async () => {
      server.failUploads(2, 503);
      const uri = `gs://${BUCKET}/protocol/down.json`;
      const error = await store.put(uri, Buffer.from('{}'), JSON_TYPE).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArtifactWriteError);
      expect(error).toMatchObject({
        code: 'GCS_WRITE_FAILED',
        retryable: true,
        details: { uri, httpStatus: 503, gcsReason: 'fake' },
      });
      expect((error as Error).message).not.toContain('injected');
    });

    it('maps an unreachable endpoint to retryable errors', async () => {
      const closed = await startFakeGcsServer();
      await closed.close();
      const offline = new GcsArtifactStore({
        storage: new Storage({
          apiEndpoint: closed.endpoint,
          projectId: 'test',
          credentials: CREDENTIALS,
          retryOptions: { autoRetry: false },
        }),
      });
      const uri = `gs://${BUCKET}/protocol/offline.json`;
      await expect(offline.put(uri, Buffer.from('{}'), JSON_TYPE)).rejects.toMatchObject({
        code: 'GCS_WRITE_FAILED',
        retryable: true,
      });
      await expect(offline.read(uri)).rejects.toBeInstanceOf(ArtifactReadError);
      await expect(offline.exists(uri)).rejects.toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        retryable: true,
      });
    });

    it('signs a V4 read url for the object', async () => {
      const uri = `gs://${BUCKET}/protocol/signed/report.json`;
      await store.put(uri, Buffer.from('{}'), JSON_TYPE);
      const url = new URL(await store.signedUrl(uri, { expiresInSeconds: 900 }));
      expect(url.pathname).toBe(`/${BUCKET}/protocol/signed/report.json`);
      expect(url.searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
      expect(url.searchParams.get('X-Goog-Expires')).toBe('900');
      expect(url.searchParams.get('X-Goog-Credential')).toContain(CREDENTIALS.client_email);
      expect(url.searchParams.get('X-Goog-Signature')).toMatch(/^[0-9a-f]{512}$/);
    });

    it('fails signing with a non-retryable error when the identity cannot sign', async () => {
      const uri = `gs://${BUCKET}/protocol/unsignable.json`;
      await store.put(uri, Buffer.from('{}'), JSON_TYPE);
      // An external-account style credential without a key: google-auth refuses to sign offline.
      const unsigned = new GcsArtifactStore({
        storage: storageFor(server, { client_email: CREDENTIALS.client_email }),
      });
      const error = await unsigned
        .signedUrl(uri, { expiresInSeconds: 60 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArtifactSigningError);
      expect(error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: false });
    });
  });
});
