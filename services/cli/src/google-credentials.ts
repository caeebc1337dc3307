import { GoogleAuth } from 'google-auth-library';
import { CliError } from './cli-error';

/**
 * How long getting a token may take. It may ask the GCE metadata server, which on some networks
 * neither answers nor refuses (the Firestore client would then wait on it for every call); 10 s
 * is far beyond a real lookup.
 */
export const CREDENTIALS_LOOKUP_TIMEOUT_MS = 10_000;

/** Gets an access token from Application Default Credentials (rejects when it cannot). */
export type CredentialsLookup = () => Promise<unknown>;

export const findApplicationDefaultCredentials: CredentialsLookup = async () => {
  const auth = new GoogleAuth({ scopes: ['https://www.googleapis.com/auth/cloud-platform'] });
  // A token, not only a client: a metadata-server client is "found" without asking the server.
  return (await auth.getClient()).getAccessToken();
};

const HINT =
  'run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file), ' +
  'or set FIRESTORE_EMULATOR_HOST=host:port to use the Firestore emulator';

/** The library's first sentence ("Could not load the default credentials"), not its links. */
function firstSentence(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split(/\.\s|\n/)[0] ?? '';
}

/**
 * Checks that Google Cloud credentials give a token before a Firestore client is built on them.
 * Without this, the client fails inside its own promises: a stack trace, unhandled rejections
 * and the process gone before the CLI can say what is missing. One coded line instead.
 */
export async function assertGoogleCredentials(
  target: string,
  lookup: CredentialsLookup = findApplicationDefaultCredentials,
  timeoutMs = CREDENTIALS_LOOKUP_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const message = `no token within ${timeoutMs} ms; is the metadata server reachable?`;
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
  });
  try {
    await Promise.race([lookup(), timeout]);
  } catch (error) {
    throw new CliError(
      'UNAUTHENTICATED',
      `no usable Google Cloud credentials for ${target} (${firstSentence(error)}): ${HINT}`,
    );
  } finally {
    clearTimeout(timer);
  }
}
