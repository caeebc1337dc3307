import type { DeployEnvironment } from '../deployment-model';

/**
 * The deploy environment the infra tests run against: profile `dev` or `prod` of the fictional
 * project `acme-tda-<profile>` in europe-west1, with the defaults parseEnvironments would fill in.
 */
export function testEnvironment(
  profile: 'dev' | 'prod' = 'prod',
  overrides: Partial<DeployEnvironment> = {},
): DeployEnvironment {
  const project = `acme-tda-${profile}`;
  return {
    profile,
    project,
    region: 'europe-west1',
    pubsubPrefix: 'tda',
    artifactsBucket: `${project}-tda-artifacts`,
    maxRunningRuns: profile === 'dev' ? 5 : 20,
    llm: 'gemini-api',
    ...overrides,
  };
}
