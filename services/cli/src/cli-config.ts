import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostPortSchema, loadConfig, type EnvSource } from '@tda/config';
import { z } from 'zod';
import { CliError } from './cli-error';

export const cliConfigSchema = z.object({
  TDA_API_URL: z.string().url().optional(),
  /** Sent in the Authorization header: printable ASCII, no spaces (a pasted "…" is not a token). */
  TDA_API_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'must be the token exactly: printable ASCII, no spaces')
    .optional(),
  /**
   * A Google identity token for an orchestrator behind Cloud Run IAM (`gcloud auth
   * print-identity-token`), sent as X-Serverless-Authorization: Cloud Run checks that header and
   * leaves Authorization (the API token) to the orchestrator.
   */
  TDA_API_ID_TOKEN: z.string().min(1).optional(),
  TDA_DATA_DIR: z.string().min(1).default('.data'),
  /**
   * `tda llm seed` talks to Firestore directly. No default project on purpose: seeding the wrong
   * project is worse than asking for one.
   */
  GOOGLE_CLOUD_PROJECT: z.string().min(1).optional(),
  FIRESTORE_EMULATOR_HOST: hostPortSchema.optional(),
  /** `tda infra apply`: the Pub/Sub topology goes to this emulator (nothing else is applied). */
  PUBSUB_EMULATOR_HOST: hostPortSchema.optional(),
  /**
   * `tda infra apply`: send the Google REST calls to `<this>/<service>/<path>` instead of
   * `https://<service>.googleapis.com/<path>` (tests: a FakeGcpApi over HTTP). An http:// endpoint
   * gets no credentials (an access token never travels in clear text); https:// gets ADC's.
   */
  TDA_GOOGLE_API_ENDPOINT: z.string().url().optional(),
});
export type CliConfig = z.infer<typeof cliConfigSchema>;

/** Where `npm start` records the local API address and its generated token. */
export const LOCAL_API_FILE = 'local-api.json';

export interface ApiTarget {
  baseUrl: string;
  token: string;
  /** Google identity token for Cloud Run IAM (TDA_API_ID_TOKEN). */
  identityToken?: string;
  source: 'env' | 'local-stack';
}

/**
 * The API to talk to: TDA_API_URL/TDA_API_TOKEN when set, otherwise the local stack started by
 * `npm start` (it writes its URL and token to <TDA_DATA_DIR>/local-api.json).
 */
export function resolveApiTarget(env?: EnvSource): ApiTarget {
  const config = loadConfig('tda-cli', cliConfigSchema, env);
  if (config.TDA_API_URL !== undefined && config.TDA_API_TOKEN !== undefined) {
    return {
      baseUrl: config.TDA_API_URL,
      token: config.TDA_API_TOKEN,
      ...(config.TDA_API_ID_TOKEN === undefined ? {} : { identityToken: config.TDA_API_ID_TOKEN }),
      source: 'env',
    };
  }
  const file = join(config.TDA_DATA_DIR, LOCAL_API_FILE);
  let local: { url?: unknown; token?: unknown };
  try {
    local = JSON.parse(readFileSync(file, 'utf8')) as { url?: unknown; token?: unknown };
  } catch {
    throw new CliError(
      'INVALID_REQUEST',
      `no API configured: set TDA_API_URL and TDA_API_TOKEN, or start the local stack with ` +
        `\`npm start\` (it writes ${file})`,
    );
  }
  if (typeof local.url !== 'string' || typeof local.token !== 'string') {
    throw new CliError(
      'INVALID_REQUEST',
      `${file} is not a local API description; restart \`npm start\``,
    );
  }
  return {
    baseUrl: config.TDA_API_URL ?? local.url,
    token: config.TDA_API_TOKEN ?? local.token,
    source: 'local-stack',
  };
}

export interface FirestoreTarget {
  projectId: string;
  /** host:port of the Firestore emulator; absent = Google Cloud with Application Default Credentials. */
  emulatorHost?: string;
}

/**
 * The Firestore that `tda llm seed` writes to: `--project` or GOOGLE_CLOUD_PROJECT, the emulator
 * when FIRESTORE_EMULATOR_HOST is set.
 */
export function resolveFirestoreTarget(
  env?: EnvSource,
  flags: { project?: string } = {},
): FirestoreTarget {
  const config = loadConfig('tda-cli', cliConfigSchema, env);
  const projectId = flags.project ?? config.GOOGLE_CLOUD_PROJECT;
  if (projectId === undefined || projectId === '') {
    throw new CliError(
      'INVALID_REQUEST',
      'no Google Cloud project: pass --project <id> or set GOOGLE_CLOUD_PROJECT',
    );
  }
  return {
    projectId,
    ...(config.FIRESTORE_EMULATOR_HOST === undefined
      ? {}
      : { emulatorHost: config.FIRESTORE_EMULATOR_HOST }),
  };
}

export interface InfraTarget {
  /** host:port of the Pub/Sub emulator; absent = Pub/Sub of the project (ADC). */
  pubsubEmulatorHost?: string;
  /** REST endpoint override (TDA_GOOGLE_API_ENDPOINT). */
  googleApiEndpoint?: string;
  /** host:port of the Firestore emulator for the LLM registry seed; absent = the project's (ADC). */
  firestoreEmulatorHost?: string;
}

/** Where `tda infra apply` sends its calls (see cliConfigSchema). */
export function resolveInfraTarget(env?: EnvSource): InfraTarget {
  const config = loadConfig('tda-cli', cliConfigSchema, env);
  return {
    ...(config.PUBSUB_EMULATOR_HOST === undefined
      ? {}
      : { pubsubEmulatorHost: config.PUBSUB_EMULATOR_HOST }),
    ...(config.TDA_GOOGLE_API_ENDPOINT === undefined
      ? {}
      : { googleApiEndpoint: config.TDA_GOOGLE_API_ENDPOINT }),
    ...(config.FIRESTORE_EMULATOR_HOST === undefined
      ? {}
      : { firestoreEmulatorHost: config.FIRESTORE_EMULATOR_HOST }),
  };
}
