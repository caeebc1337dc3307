import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ArtifactConflictError,
  ArtifactNotFoundError,
  InvalidArtifactRequestError,
  InvalidArtifactUriError,
} from './artifacts.errors';
import {
  LOCAL_SYNC_PUT_MAX_BYTES,
  LOCAL_TEMP_PREFIX,
  LocalArtifactStore,
} from './local-artifact.store';
import { describeArtifactStoreConformance } from './testing';

const JSON_TYPE = { contentType: 'application/json' };

async function listFilesRecursively(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => !e.isDirectory()).map((e) => join(e.parentPath, e.name));
}

describeArtifactStoreConformance('LocalArtifactStore', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tda-artifacts-'));
  return {
    store: new LocalArtifactStore({ dataDir }),
    bucket: 'tda-test-artifacts',
    cleanup: async () => {
      // Every conformance case (including races and conflicts) must leave no temp file behind.
      const leftovers = (await listFilesRecursively(dataDir)).filter((f) =>
        f.includes(LOCAL_TEMP_PREFIX),
      );
      await rm(dataDir, { recursive: true, force: true });
      expect(leftovers).toEqual([]);
    },
  };
});

describe('LocalArtifactStore (filesystem specifics)', () => {
  let dataDir: string;
  let store: LocalArtifactStore;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tda-artifacts-'));
    store = new LocalArtifactStore({ dataDir });
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stores gs://bucket/path at <dataDir>/<bucket>/<path> and signs it as a file:// url', async () => {
    const uri = 'gs://tda-artifacts/runs/r1/1M/ohlcv_export:1M.json';
    await store.put(uri, Buffer.from('{"a":1}'), JSON_TYPE);
    const expected = join(dataDir, 'tda-artifacts', 'runs', 'r1', '1M', 'ohlcv_export:1M.json');
    expect(store.pathOf(uri)).toBe(expected);
    expect(await listFilesRecursively(dataDir)).toEqual([expected]);
    const url = await store.signedUrl(uri, { expiresInSeconds: 60 });
    expect(url.startsWith('file://')).toBe(true);
    expect(fileURLToPath(url)).toBe(expected);
  });

  it('never leaves temp files, also when the write is refused', async () => {
    const uri = 'gs://tda-artifacts/runs/a.json';
    await store.put(uri, Buffer.from('1'), JSON_TYPE);
    await store.put(uri, Buffer.from('1'), JSON_TYPE);
    await expect(store.put(uri, Buffer.from('2'), JSON_TYPE)).rejects.toBeInstanceOf(
      ArtifactConflictError,
    );
    // a/b exists as an object, so a/b/c cannot be a file on disk
    await expect(
      store.put('gs://tda-artifacts/runs/a.json/child.json', Buffer.from('3'), JSON_TYPE),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'path-shape' } });
    await store.put('gs://tda-artifacts/runs/dir/child.json', Buffer.from('4'), JSON_TYPE);
    await expect(
      store.put('gs://tda-artifacts/runs/dir', Buffer.from('5'), JSON_TYPE),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'path-shape' } });
    expect(
      (await listFilesRecursively(dataDir)).map((f) => f.slice(dataDir.length)).sort(),
    ).toEqual(['/tda-artifacts/runs/a.json', '/tda-artifacts/runs/dir/child.json']);
  });

  it('ignores a stray temp file left by a crash and reserves the temp prefix', async () => {
    const dir = join(dataDir, 'tda-artifacts', 'runs');
    await mkdir(dir, { recursive: true });
    // What a process killed mid-write leaves: a partial temp file, no final name.
    await writeFile(join(dir, `${LOCAL_TEMP_PREFIX}999-deadbeef`), '{"partial');
    const uri = 'gs://tda-artifacts/runs/report.json';
    await expect(store.exists(uri)).resolves.toBe(false);
    await expect(store.put(uri, Buffer.from('{"full":true}'), JSON_TYPE)).resolves.toMatchObject({
      created: true,
    });
    expect((await store.read(uri)).toString()).toBe('{"full":true}');
    await expect(
      store.read(`gs://tda-artifacts/runs/${LOCAL_TEMP_PREFIX}999-deadbeef`),
    ).rejects.toBeInstanceOf(InvalidArtifactUriError);
  });

  it('refuses to follow a symlink out of the data dir', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'tda-outside-'));
    try {
      await writeFile(join(outside, 'secret.json'), '{"secret":1}');
      await mkdir(join(dataDir, 'tda-artifacts'), { recursive: true });
      await symlink(outside, join(dataDir, 'tda-artifacts', 'link'));
      const uri = 'gs://tda-artifacts/link/secret.json';
      await expect(store.read(uri)).rejects.toBeInstanceOf(InvalidArtifactUriError);
      await expect(store.exists(uri)).rejects.toBeInstanceOf(InvalidArtifactUriError);
      await expect(
        store.put('gs://tda-artifacts/link/new.json', Buffer.from('{}'), JSON_TYPE),
      ).rejects.toBeInstanceOf(InvalidArtifactUriError);
      expect(await readdir(outside)).toEqual(['secret.json']);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('writes again into a directory removed after it was checked (created anew, once)', async () => {
    await store.put('gs://tda-artifacts/runs/r1/a.json', Buffer.from('{}'), JSON_TYPE);
    await rm(join(dataDir, 'tda-artifacts', 'runs'), { recursive: true, force: true });
    await expect(
      store.put('gs://tda-artifacts/runs/r1/b.json', Buffer.from('{"b":1}'), JSON_TYPE),
    ).resolves.toMatchObject({ created: true });
    expect((await store.read('gs://tda-artifacts/runs/r1/b.json')).toString()).toBe('{"b":1}');
    await expect(store.exists('gs://tda-artifacts/runs/r1/a.json')).resolves.toBe(false);
  });

  it('reads a missing bucket or a data dir that does not exist yet as not found', async () => {
    const fresh = new LocalArtifactStore({ dataDir: join(dataDir, 'not-created-yet') });
    await expect(fresh.exists('gs://tda-artifacts/a.json')).resolves.toBe(false);
    await expect(fresh.read('gs://tda-artifacts/a.json')).rejects.toBeInstanceOf(
      ArtifactNotFoundError,
    );
    await expect(
      fresh.put('gs://tda-artifacts/a.json', Buffer.from('{}'), JSON_TYPE),
    ).resolves.toMatchObject({
      created: true,
    });
  });

  // The conformance suite's races use small objects (synchronous calls); these go through the
  // thread pool, where the writers really interleave.
  it('creates a large object once and lets one of several large writers win', async () => {
    const big = (tag: string) => Buffer.from(tag.repeat(LOCAL_SYNC_PUT_MAX_BYTES / 4 + 1));
    const same = 'gs://tda-artifacts/runs/r9/_/same.json';
    const created = await Promise.all(
      Array.from({ length: 6 }, () => store.put(same, big('abcd'), JSON_TYPE)),
    );
    expect(created.map((r) => r.created).sort()).toEqual([false, false, false, false, false, true]);
    expect((await store.read(same)).equals(big('abcd'))).toBe(true);

    const contested = 'gs://tda-artifacts/runs/r9/_/contested.json';
    const writers = ['wxyz', 'WXYZ', 'small'].map((tag) =>
      tag === 'small' ? Buffer.from('{}') : big(tag),
    );
    const settled = await Promise.allSettled(
      writers.map((data) => store.put(contested, data, JSON_TYPE)),
    );
    const won = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const s of settled) {
      if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(ArtifactConflictError);
    }
    expect((await store.read(contested)).equals(writers[won[0] ?? -1] ?? Buffer.alloc(0))).toBe(
      true,
    );
    const temps = (await listFilesRecursively(dataDir)).filter((f) =>
      f.includes(LOCAL_TEMP_PREFIX),
    );
    expect(temps).toEqual([]);
  });

  it('needs a data dir', () => {
    expect(() => new LocalArtifactStore({ dataDir: '' })).toThrow(InvalidArtifactRequestError);
  });
});
