import type { ArtifactStore, PutOptions, PutResult, SignedUrlOptions } from '@tda/artifacts';

/**
 * An ArtifactStore decorator that counts calls and records put uris (create-only semantics come
 * from the wrapped store, e.g. InMemoryArtifactStore), with fault injection for put.
 */
export class CountingArtifactStore implements ArtifactStore {
  puts = 0;
  reads = 0;
  existsChecks = 0;
  /** Uris of successful puts that created an object, in order. */
  readonly created: string[] = [];
  private failPuts: Error[] = [];

  constructor(readonly inner: ArtifactStore) {}

  /** The next `count` put() calls throw `error` without reaching the store. */
  failNextPuts(count: number, error: Error): void {
    this.failPuts.push(...Array.from({ length: count }, () => error));
  }

  resetCounts(): void {
    this.puts = 0;
    this.reads = 0;
    this.existsChecks = 0;
    this.created.length = 0;
  }

  async put(uri: string, data: Buffer, options: PutOptions): Promise<PutResult> {
    this.puts += 1;
    const failure = this.failPuts.shift();
    if (failure !== undefined) throw failure;
    const result = await this.inner.put(uri, data, options);
    if (result.created) this.created.push(uri);
    return result;
  }

  read(uri: string): Promise<Buffer> {
    this.reads += 1;
    return this.inner.read(uri);
  }

  exists(uri: string): Promise<boolean> {
    this.existsChecks += 1;
    return this.inner.exists(uri);
  }

  signedUrl(uri: string, options: SignedUrlOptions): Promise<string> {
    return this.inner.signedUrl(uri, options);
  }
}
