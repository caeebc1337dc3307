import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { assertGcloudPresent, freePort } from './emulators';

describe('emulator global setup helpers', () => {
  it('names the Debian packages to install when gcloud is missing', () => {
    expect(() => assertGcloudPresent('gcloud-not-installed-here')).toThrow(
      /google-cloud-cli-firestore-emulator and google-cloud-cli-pubsub-emulator/,
    );
  });

  it('returns a loopback port that an emulator can then bind', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(typeof address === 'object' && address !== null ? address.port : undefined).toBe(port);
  });
});
