import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, realpathSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { validatePutArguments, validateSignedUrlOptions } from './artifact-request';
import type { ArtifactStore, PutOptions, PutResult, SignedUrlOptions } from './artifact-store.port';
import {
  ArtifactConflictError,
  ArtifactNotFoundError,
  ArtifactReadError,
  ArtifactWriteError,
  InvalidArtifactRequestError,
  InvalidArtifactUriError,
} from './artifacts.errors';
import { sha256Hex } from './content-hash';
import { parseGcsUri } from './gcs-uri';

/**
 * Temp files live beside their final name (same directory, so same filesystem: link() cannot
 * fail with EXDEV) and start with this prefix. Object names whose last segment starts with it
 * are rejected so a temp file can never be mistaken for, or collide with, an object.
 */
export const LOCAL_TEMP_PREFIX = '.tda-tmp-';

/** Checked directories remembered at most (then forgotten all at once and checked again). */
const CHECKED_DIRS_MAX = 10_000;

/** Objects up to this size are written with synchronous calls (see the class comment). */
export const LOCAL_SYNC_PUT_MAX_BYTES = 64 * 1024;

/** The file calls of a put: synchronous for small objects, through the thread pool otherwise. */
interface PutCalls {
  writeNew(path: string, data: Buffer): void | Promise<void>;
  link(existing: string, path: string): void | Promise<void>;
  unlink(path: string): void | Promise<void>;
}

const SYNC_CALLS: PutCalls = {
  writeNew: (path, data) => writeFileSync(path, data, { flag: 'wx', mode: 0o644 }),
  link: linkSync,
  unlink: unlinkSync,
};

const ASYNC_CALLS: PutCalls = {
  writeNew: (path, data) => writeFile(path, data, { flag: 'wx', mode: 0o644 }),
  link,
  unlink,
};

export interface LocalArtifactStoreOptions {
  /** Root directory; gs://<bucket>/<path> is stored at <dataDir>/<bucket>/<path>. */
  dataDir: string;
}

/**
 * ArtifactStore on the local filesystem (the `memory`/`emulators` backends and the local stack).
 * Create-only writes are atomic: the bytes go to a temp file in the target directory, which is
 * then hard-linked to the final name. link(2) fails with EEXIST when the name exists, so exactly
 * one concurrent writer creates the object, and the final name only ever appears with complete
 * contents — a crash before the link leaves at most a stray `.tda-tmp-*` file, never a partial
 * object. On EEXIST the existing bytes are compared: identical → created:false, else conflict.
 *
 * The bytes are not fsynced. A process crash loses nothing the kernel holds, and this store backs
 * only the local backends, whose run state (in process, or in an emulator's memory) does not
 * outlive a power cut either; the fsync tripled a put's time and was half the main thread's work
 * for a put (issue 16: 130 → 30 µs a put at 32 at once).
 *
 * Puts of objects up to LOCAL_SYNC_PUT_MAX_BYTES, `exists` and the directory checks use
 * synchronous calls. On a local disk their syscalls take less time than the thread pool's round
 * trips cost the main thread for the same calls (issue 16, exists + put of a 600-byte object
 * on tmpfs: 32–51 µs of CPU synchronous, 150–330 µs through fs/promises, which was half of a
 * no-op step in the embedded backend). Larger objects (charts, backtests) and reads go through
 * the thread pool, so a big transfer never stalls the event loop.
 */
export class LocalArtifactStore implements ArtifactStore {
  private readonly dataDir: string;
  private realDataDir: string | undefined;
  /**
   * Directories this store created or found and checked to lie inside the data dir: a step's
   * directory is checked once, not on every put and exists (a mkdir and a realpath each were a
   * tenth of a no-op step's CPU in the embedded backend, issue 16). A directory removed since is
   * noticed by the put (ENOENT) and checked again.
   */
  private readonly checkedDirs = new Set<string>();
  /** Temp names: pid, this instance's tag, a counter (unique without a random draw per put). */
  private readonly tempTag = randomBytes(4).toString('hex');
  private tempSeq = 0;

  constructor(options: LocalArtifactStoreOptions) {
    if (typeof options?.dataDir !== 'string' || options.dataDir.length === 0) {
      throw new InvalidArtifactRequestError('LocalArtifactStore needs a dataDir');
    }
    this.dataDir = resolve(options.dataDir);
  }

  async put(uri: string, data: Buffer, options: PutOptions): Promise<PutResult> {
    const target = this.pathOf(uri);
    validatePutArguments(data, options);
    const sha256 = sha256Hex(data);
    const result = (created: boolean): PutResult => ({ uri, created, sha256, bytes: data.length });
    const pathShapeConflict = () =>
      new ArtifactConflictError(uri, { reason: 'path-shape', attemptedSha256: sha256 });

    const dir = dirname(target);
    if (!this.checkedDirs.has(dir)) this.ensureDir(uri, dir, pathShapeConflict);
    const calls = data.length <= LOCAL_SYNC_PUT_MAX_BYTES ? SYNC_CALLS : ASYNC_CALLS;
    let temp: string | undefined;
    try {
      try {
        temp = await this.writeTemp(calls, uri, dir, data, pathShapeConflict);
        await calls.link(temp, target);
        return result(true);
      } catch (error) {
        if (error instanceof ArtifactConflictError) throw error;
        if (!hasCode(error, 'EEXIST')) throw new ArtifactWriteError(uri, errnoReason(error));
      }
      // The name exists: an idempotent re-put, a concurrent writer that won, or a conflict. The
      // existing object may be of any size: read through the thread pool.
      let existing: Buffer;
      try {
        existing = await readFile(target);
      } catch (error) {
        if (hasCode(error, 'EISDIR')) throw pathShapeConflict();
        throw new ArtifactWriteError(uri, errnoReason(error));
      }
      if (existing.equals(data)) return result(false);
      throw new ArtifactConflictError(uri, {
        reason: 'different-bytes',
        attemptedSha256: sha256,
        existingSha256: sha256Hex(existing),
      });
    } finally {
      if (temp !== undefined) await removeQuietly(calls, temp);
    }
  }

  /** Creates `dir` (a parent that is an object file is a path-shape conflict) and checks it. */
  private ensureDir(uri: string, dir: string, shapeConflict: () => Error): void {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      // A parent "directory" is an existing object file: GCS allows a/b and a/b/c, a disk does not.
      if (hasCode(error, 'ENOTDIR', 'EEXIST')) throw shapeConflict();
      throw new ArtifactWriteError(uri, errnoReason(error));
    }
    this.assertInsideDataDir(uri, dir, 'write');
    if (this.checkedDirs.size >= CHECKED_DIRS_MAX) this.checkedDirs.clear();
    this.checkedDirs.add(dir);
  }

  /**
   * `data` in a new temp file in `dir`, whose name is returned; a checked directory that went
   * away is created again, once. A write that fails part way removes its temp file.
   */
  private async writeTemp(
    calls: PutCalls,
    uri: string,
    dir: string,
    data: Buffer,
    shapeConflict: () => Error,
  ): Promise<string> {
    for (let retry = true; ; retry = false) {
      this.tempSeq += 1;
      const temp = join(dir, `${LOCAL_TEMP_PREFIX}${process.pid}-${this.tempTag}-${this.tempSeq}`);
      try {
        await calls.writeNew(temp, data);
        return temp;
      } catch (error) {
        if (!hasCode(error, 'ENOENT', 'EEXIST')) await removeQuietly(calls, temp);
        if (!retry || !hasCode(error, 'ENOENT') || !this.checkedDirs.delete(dir)) throw error;
        this.ensureDir(uri, dir, shapeConflict);
      }
    }
  }

  async read(uri: string): Promise<Buffer> {
    const target = this.pathOf(uri);
    try {
      this.assertReadable(uri, dirname(target));
      return await readFile(target);
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) throw new ArtifactNotFoundError(uri);
      throw asReadError(uri, error);
    }
  }

  async exists(uri: string): Promise<boolean> {
    const target = this.pathOf(uri);
    try {
      this.assertReadable(uri, dirname(target));
      // No error for the usual answer (a step checks before it writes): building one with its
      // stack cost ~6 µs a step (issue 16).
      return statSync(target, { throwIfNoEntry: false })?.isFile() === true;
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR')) return false;
      throw asReadError(uri, error);
    }
  }

  /** A `file://` URL of the object; the expiry is validated but cannot be enforced locally. */
  async signedUrl(uri: string, options: SignedUrlOptions): Promise<string> {
    const target = this.pathOf(uri);
    validateSignedUrlOptions(options);
    if (!(await this.exists(uri))) throw new ArtifactNotFoundError(uri);
    return pathToFileURL(target).href;
  }

  /** The file that holds `uri` (validated; always inside dataDir). */
  pathOf(uri: string): string {
    const { bucket, path } = parseGcsUri(uri);
    const segments = path.split('/');
    const last = segments[segments.length - 1] ?? '';
    if (last.startsWith(LOCAL_TEMP_PREFIX)) {
      throw new InvalidArtifactUriError(
        uri,
        `names starting with '${LOCAL_TEMP_PREFIX}' are reserved`,
      );
    }
    const target = resolve(this.dataDir, bucket, ...segments);
    // parseGcsUri already rejects '..' and empty segments; this is the belt to those braces.
    if (!isInside(this.dataDir, target))
      throw new InvalidArtifactUriError(uri, 'escapes the data dir');
    return target;
  }

  /** A read's directory check, skipped for a directory this store checked already. */
  private assertReadable(uri: string, dir: string): void {
    if (!this.checkedDirs.has(dir)) this.assertInsideDataDir(uri, dir, 'read');
  }

  /**
   * Symlinks inside dataDir could still lead elsewhere; the real path of the directory must stay
   * under the real dataDir.
   */
  private assertInsideDataDir(uri: string, dir: string, op: 'read' | 'write'): void {
    let realDir: string;
    try {
      realDir = realpathSync.native(dir);
    } catch (error) {
      if (op === 'read') throw error; // ENOENT / ENOTDIR: mapped to not-found by the caller
      throw new ArtifactWriteError(uri, errnoReason(error));
    }
    let realRoot: string;
    try {
      // Memoized once resolved; a failed lookup is not cached (the dir may appear later).
      realRoot = this.realDataDir ??= realpathSync.native(this.dataDir);
    } catch (error) {
      if (op === 'read') throw error;
      throw new ArtifactWriteError(uri, errnoReason(error));
    }
    if (!isInside(realRoot, realDir)) {
      throw new InvalidArtifactUriError(uri, 'resolves outside the data dir');
    }
  }
}

/** Best effort: a temp file left behind is harmless (its prefix is reserved). */
async function removeQuietly(calls: PutCalls, path: string): Promise<void> {
  try {
    await calls.unlink(path);
  } catch {
    // already gone, or the directory went away
  }
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    codes.includes(error.code)
  );
}

/** The errno code only: fs messages embed absolute paths, which do not belong in step errors. */
function errnoReason(error: unknown): string {
  if (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string'
  ) {
    return error.code;
  }
  return 'unexpected filesystem error';
}

function asReadError(uri: string, error: unknown): Error {
  if (error instanceof InvalidArtifactUriError) return error;
  return new ArtifactReadError(uri, errnoReason(error));
}
