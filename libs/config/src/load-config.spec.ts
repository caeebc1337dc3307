import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, googleBackendEnv, loadConfig, refineGoogleBackend } from './load-config';

const schema = z
  .object({ ...googleBackendEnv, PORT: z.coerce.number().int().min(1) })
  .superRefine(refineGoogleBackend);

describe('loadConfig', () => {
  it('returns typed values with defaults', () => {
    const config = loadConfig('svc', schema, { PORT: '8080' });
    expect(config).toMatchObject({
      TDA_BACKEND: 'memory',
      PORT: 8080,
      GOOGLE_CLOUD_PROJECT: 'tda-local',
    });
  });

  it('fails fast naming every bad key, without echoing values', () => {
    let thrown: unknown;
    try {
      loadConfig('svc', schema, { PORT: 'secret-value', TDA_BACKEND: 'nope' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message).toContain('PORT');
    expect(message).toContain('TDA_BACKEND');
    expect(message).not.toContain('secret-value');
  });

  it('requires both emulator hosts in emulators mode', () => {
    expect(() => loadConfig('svc', schema, { PORT: '1', TDA_BACKEND: 'emulators' })).toThrow(
      /FIRESTORE_EMULATOR_HOST: is required when TDA_BACKEND=emulators/,
    );
  });

  it('refuses emulator hosts in gcp mode', () => {
    expect(() =>
      loadConfig('svc', schema, {
        PORT: '1',
        TDA_BACKEND: 'gcp',
        PUBSUB_EMULATOR_HOST: 'localhost:8085',
      }),
    ).toThrow(/PUBSUB_EMULATOR_HOST: must not be set/);
  });
});
