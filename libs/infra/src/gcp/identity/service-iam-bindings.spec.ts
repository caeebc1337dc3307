import { describe, expect, it } from 'vitest';
import {
  PUSH_INVOKER_ACCOUNT_ID,
  SCHEDULER_ACCOUNT_ID,
  SECRETS,
  SERVICE_DEPLOYMENTS,
} from '../../deployment-model';
import type { IamBinding } from './iam-bindings';
import { desiredServiceAccounts } from './service-accounts';
import { desiredServiceIamBindings } from './service-iam-bindings';
import { llmWorkerMembers, testEnvironment } from '../../testing';

const env = testEnvironment('prod');

describe('desired identities', () => {
  it('binds every service account of the model, with each of its roles and a reason', () => {
    const bindings = desiredServiceIamBindings(env);
    for (const service of SERVICE_DEPLOYMENTS) {
      const member = `serviceAccount:${service.name}@acme-tda-prod.iam.gserviceaccount.com`;
      const own = bindings.filter((b) => b.member === member);
      expect(own.map((b) => [b.resource, b.role])).toEqual(
        service.roles(env).map((r) => [r.resource, r.role]),
      );
    }
    expect(bindings.every((b) => b.reason.length > 0)).toBe(true);
    expect(
      bindings.some((b) => b.resource.type === 'bucket' && b.resource.name === env.artifactsBucket),
    ).toBe(true);
  });

  it('grants each LLM worker roles/aiplatform.user instead of the Gemini key with llm=vertex-ai', () => {
    const llmWorkers = llmWorkerMembers(env.project);
    const geminiAccessor = (b: IamBinding) =>
      b.resource.type === 'secret' &&
      b.resource.name === SECRETS.geminiApiKey &&
      b.role === 'roles/secretmanager.secretAccessor';
    const aiplatformUser = (b: IamBinding) =>
      b.resource.type === 'project' && b.role === 'roles/aiplatform.user';

    // exactly one grant per LLM worker, and to no other account
    const vertex = desiredServiceIamBindings({ ...env, llm: 'vertex-ai' });
    expect(vertex.filter(aiplatformUser).map((b) => b.member)).toEqual(llmWorkers);
    expect(vertex.some(geminiAccessor)).toBe(false);

    const gemini = desiredServiceIamBindings(env);
    expect(gemini.filter(geminiAccessor).map((b) => b.member)).toEqual(llmWorkers);
    expect(gemini.some(aiplatformUser)).toBe(false);
  });

  it('grants no primitive role', () => {
    const primitive = new Set(['roles/owner', 'roles/editor', 'roles/viewer']);
    expect(desiredServiceIamBindings(env).filter((b) => primitive.has(b.role))).toEqual([]);
  });

  it('creates one account per deployable service plus the push and scheduler invokers', () => {
    const accounts = desiredServiceAccounts(env);
    expect(accounts.map((a) => a.accountId)).toEqual([
      ...SERVICE_DEPLOYMENTS.map((s) => s.name),
      PUSH_INVOKER_ACCOUNT_ID,
      SCHEDULER_ACCOUNT_ID,
    ]);
    for (const a of accounts) {
      expect(a.accountId).toMatch(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/);
      expect(a.displayName.length).toBeLessThanOrEqual(100);
      expect(a.description.length).toBeLessThanOrEqual(256);
    }
  });
});
