import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error';
import { assertGoogleCredentials } from './google-credentials';

const TARGET = 'Firestore project x';

async function failure(promise: Promise<void>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof CliError)) throw new Error(`expected a CliError, got ${String(error)}`);
  return error;
}

describe('assertGoogleCredentials', () => {
  it('passes when a token comes back', async () => {
    await expect(assertGoogleCredentials(TARGET, async () => 'token')).resolves.toBeUndefined();
  });

  it('no credentials: UNAUTHENTICATED with the library’s reason and what to do', async () => {
    const error = await failure(
      assertGoogleCredentials(TARGET, async () => {
        throw new Error(
          'Could not load the default credentials. Browse to https://cloud.google.com/docs for more information.',
        );
      }),
    );
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toMatch(
      /^no usable Google Cloud credentials for Firestore project x \(Could not load the default credentials\): run `gcloud auth application-default login`/,
    );
    expect(error.message).not.toContain('https://');
    expect(error.message).toContain('FIRESTORE_EMULATOR_HOST');
  });

  it('a lookup that never answers (an unreachable metadata server) is bounded', async () => {
    const never = (): Promise<unknown> => new Promise(() => undefined);
    const error = await failure(assertGoogleCredentials(TARGET, never, 20));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('(no token within 20 ms; is the metadata server reachable?)');
  });
});
