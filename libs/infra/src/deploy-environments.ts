import { z } from 'zod';
import { LLM_PROVIDERS, type DeployEnvironment } from './deployment-model';
import { InfraError } from './infra.errors';

/**
 * deploy/environments.json: the skaffold profiles and the GCP project and region each deploys
 * to. Everything project-specific in the rendered manifests comes from here.
 */
export const environmentSchema = z.object({
  project: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a GCP project id (6-30 of a-z 0-9 -)'),
  region: z.string().regex(/^[a-z]+-[a-z]+[0-9]$/, 'must be a region such as europe-west1'),
  pubsubPrefix: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,19}$/)
    .default('tda'),
  /** Default: `<project>-tda-artifacts`. */
  artifactsBucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$/)
    .optional(),
  maxRunningRuns: z.number().int().min(1).max(10_000).default(20),
  /** `vertex-ai`: no Gemini API key (and no secret reference), roles/aiplatform.user instead. */
  llm: z.enum(LLM_PROVIDERS).default('gemini-api'),
  /**
   * ccxt exchange id of the live exchange account (secrets tda-exchange-api-key and
   * tda-exchange-api-secret); absent: paper accounts only.
   */
  exchangeAccount: z
    .string()
    .regex(/^[a-z0-9]{2,30}$/, 'must be a ccxt exchange id such as binance')
    .optional(),
});

export const environmentsFileSchema = z
  .record(
    z.string().regex(/^[a-z][a-z0-9-]{0,19}$/, 'profile names are a-z 0-9 -'),
    environmentSchema,
  )
  .refine((value) => Object.keys(value).length > 0, 'at least one profile');

export function parseEnvironments(json: unknown): DeployEnvironment[] {
  const parsed = environmentsFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new InfraError('deploy/environments.json is invalid', {
      details: {
        issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      },
    });
  }
  return Object.entries(parsed.data).map(([profile, e]) => ({
    profile,
    project: e.project,
    region: e.region,
    pubsubPrefix: e.pubsubPrefix,
    artifactsBucket: e.artifactsBucket ?? `${e.project}-tda-artifacts`,
    maxRunningRuns: e.maxRunningRuns,
    llm: e.llm,
    ...(e.exchangeAccount === undefined ? {} : { exchangeAccount: e.exchangeAccount }),
  }));
}

/** The environment of `--profile`, or of `--project` (with its profile's region). */
export function selectEnvironment(
  environments: readonly DeployEnvironment[],
  selector: { profile?: string | undefined; project?: string | undefined },
): DeployEnvironment {
  const match = environments.find((e) =>
    selector.profile !== undefined
      ? e.profile === selector.profile
      : e.project === selector.project,
  );
  if (match === undefined) {
    throw new InfraError(
      selector.profile !== undefined
        ? `no profile ${selector.profile} in deploy/environments.json`
        : `project ${selector.project ?? '(none)'} is not in deploy/environments.json: add it (and run tda infra render)`,
      { details: { profiles: environments.map((e) => `${e.profile}=${e.project}`) } },
    );
  }
  return match;
}
