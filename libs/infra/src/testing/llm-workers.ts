import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import {
  SERVICE_DEPLOYMENTS,
  serviceAccountEmail,
  type ServiceDeployment,
} from '../deployment-model';

/**
 * The deployments of the step types whose descriptor says `deploy.needs: ['llm']`, in model
 * order: the infra tests assert the LLM rules for each of them instead of naming a worker, so a
 * new LLM step type is covered without editing them. Throws when there is none, so that a loop
 * over them can never pass vacuously.
 */
export function llmWorkerDeployments(): ServiceDeployment[] {
  const services = new Set<string>(
    STEP_TYPE_DESCRIPTORS.filter((d) => d.deploy.needs?.includes('llm') === true).map(
      (d) => d.service,
    ),
  );
  const workers = SERVICE_DEPLOYMENTS.filter((s) => services.has(s.project));
  if (workers.length === 0) throw new Error('no step type descriptor needs an llm');
  return workers;
}

/** The IAM members (`serviceAccount:<email>`) of the LLM workers in `project`, in model order. */
export function llmWorkerMembers(project: string): string[] {
  return llmWorkerDeployments().map(
    (s) => `serviceAccount:${serviceAccountEmail(s.name, project)}`,
  );
}
