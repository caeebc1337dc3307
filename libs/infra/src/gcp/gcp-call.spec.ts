import { describe, expect, it } from 'vitest';
import { FakeGcpApi } from '../testing';
import { GcpApiError } from './gcp-rest.client';
import { createMissing, gcpCall } from './gcp-call';

const URL = 'https://secretmanager.googleapis.com/v1/projects/p/secrets';
const request = { method: 'POST' as const, url: URL, params: { secretId: 's' }, body: {} };
const item = { kind: 'secret', name: 's' };
const notes = { created: 'add a value', conflict: 'already existed (created concurrently)' };

function fakeAnswering(status: number): FakeGcpApi {
  return new FakeGcpApi().on('POST', 'secretmanager', /^\/v1\/projects\/p\/secrets$/, () => ({
    status,
    data: { error: { message: `HTTP ${status}` } },
  }));
}

describe('createMissing', () => {
  it('creates and reports create with the created note', async () => {
    const fake = fakeAnswering(200);
    expect(await createMissing(fake, request, 'roles/x', { dryRun: false }, item, notes)).toEqual({
      ...item,
      action: 'create',
      changes: [],
      note: 'add a value',
    });
    expect(fake.calls).toEqual([{ method: 'POST', url: URL }]);
  });

  it('plans the create on a dry run without calling', async () => {
    const fake = fakeAnswering(200);
    const planned = await createMissing(fake, request, 'roles/x', { dryRun: true }, item, notes);
    expect(planned.action).toBe('create');
    expect(fake.calls).toEqual([]);
  });

  it('reports a 409 (created between our read and our create) as unchanged', async () => {
    const planned = await createMissing(
      fakeAnswering(409),
      request,
      'roles/x',
      { dryRun: false },
      item,
      notes,
    );
    expect(planned).toEqual({ ...item, action: 'unchanged', changes: [], note: notes.conflict });
  });

  it('rethrows other failures, a 403 with the role the deploying identity lacks', async () => {
    const failure = createMissing(
      fakeAnswering(403),
      request,
      'roles/secretmanager.admin',
      { dryRun: false },
      item,
      notes,
    );
    await expect(failure).rejects.toBeInstanceOf(GcpApiError);
    await expect(gcpCall(fakeAnswering(403), request, 'roles/secretmanager.admin')).rejects.toThrow(
      /needs roles\/secretmanager\.admin/,
    );
    await expect(
      createMissing(fakeAnswering(500), request, 'roles/x', { dryRun: false }, item, notes),
    ).rejects.toMatchObject({ status: 500 });
  });
});
