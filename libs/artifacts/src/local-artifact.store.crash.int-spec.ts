import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * Simulates a process that dies between writing the temp file and linking it: `link` throws and
 * `unlink` does nothing (a dead process cleans nothing up). The real functions are used otherwise.
 * Small objects are written with the synchronous calls, large ones with fs/promises: both are
 * faulted alike, and every case runs at both sizes.
 */
const faults = vi.hoisted(() => ({ crashAtLink: false, diskFullAfterCreate: false }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return {
    ...actual,
    writeFileSync: (...args: Parameters<typeof actual.writeFileSync>) => {
      if (!faults.diskFullAfterCreate) return actual.writeFileSync(...args);
      actual.writeFileSync(args[0], 'torn', { flag: 'wx' });
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    },
    linkSync: (existingPath: string, newPath: string) => {
      if (faults.crashAtLink) throw Object.assign(new Error('simulated crash'), { code: 'EIO' });
      return actual.linkSync(existingPath, newPath);
    },
    unlinkSync: (path: string) => {
      if (faults.crashAtLink) return;
      return actual.unlinkSync(path);
    },
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    /** ENOSPC part way: the temp file exists with some of the bytes. */
    writeFile: async (...args: Parameters<typeof actual.writeFile>) => {
      if (!faults.diskFullAfterCreate) return actual.writeFile(...args);
      await actual.writeFile(args[0], 'torn', { flag: 'wx' });
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    },
    link: async (existingPath: string, newPath: string) => {
      if (faults.crashAtLink) throw Object.assign(new Error('simulated crash'), { code: 'EIO' });
      return actual.link(existingPath, newPath);
    },
    unlink: async (path: string) => {
      if (faults.crashAtLink) return;
      return actual.unlink(path);
    },
  };
});

const { LOCAL_SYNC_PUT_MAX_BYTES, LOCAL_TEMP_PREFIX, LocalArtifactStore } =
  await import('./local-artifact.store');
const { ArtifactWriteError } = await import('./artifacts.errors');

const SIZES = [
  { name: 'a small object (synchronous calls)', data: Buffer.from('{"complete":true}') },
  {
    name: 'a large object (fs/promises)',
    data: Buffer.from(JSON.stringify({ pad: 'x'.repeat(LOCAL_SYNC_PUT_MAX_BYTES) })),
  },
];

describe.each(SIZES)('LocalArtifactStore: crash or failure before the link, $name', ({ data }) => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tda-artifacts-crash-'));
    faults.crashAtLink = false;
  });

  afterEach(async () => {
    faults.crashAtLink = false;
    faults.diskFullAfterCreate = false;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves no final file, only a temp file that a later put is not confused by', async () => {
    const store = new LocalArtifactStore({ dataDir });
    const uri = 'gs://tda-artifacts/runs/r1/1d/ohlcv_export:1d.json';

    faults.crashAtLink = true;
    const error = await store
      .put(uri, data, { contentType: 'application/json' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArtifactWriteError);
    expect(error).toMatchObject({ code: 'GCS_WRITE_FAILED', retryable: true });
    faults.crashAtLink = false;

    const dir = join(dataDir, 'tda-artifacts', 'runs', 'r1', '1d');
    const afterCrash = await readdir(dir);
    // the scenario really happened: the temp file is there, the final name is not
    expect(afterCrash).toHaveLength(1);
    expect(afterCrash[0]?.startsWith(LOCAL_TEMP_PREFIX)).toBe(true);
    await expect(store.exists(uri)).resolves.toBe(false);

    // the retried step writes the object normally
    await expect(store.put(uri, data, { contentType: 'application/json' })).resolves.toMatchObject({
      created: true,
    });
    expect((await store.read(uri)).equals(data)).toBe(true);
    expect((await readdir(dir)).filter((n) => !n.startsWith(LOCAL_TEMP_PREFIX))).toEqual([
      'ohlcv_export:1d.json',
    ]);
  });

  it('removes the temp file of a write that failed part way, and leaves no object', async () => {
    const store = new LocalArtifactStore({ dataDir });
    const uri = 'gs://tda-artifacts/runs/r2/1d/ohlcv_export:1d.json';
    faults.diskFullAfterCreate = true;
    const error = await store
      .put(uri, data, { contentType: 'application/json' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GCS_WRITE_FAILED', retryable: true });
    expect(await readdir(join(dataDir, 'tda-artifacts', 'runs', 'r2', '1d'))).toEqual([]);
    await expect(store.exists(uri)).resolves.toBe(false);
  });
});
