import { GrpcStatus } from '@google-cloud/firestore';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreFlowRunStore } from './firestore-flow-run.store';
import { FlowStoreError, RunAlreadyExistsError } from './flow-store.errors';
import { failingFirestore, grpcError, makeFlowRun } from './testing';

/** Every store operation once, against a store whose Firestore always fails. */
function operations(store: FirestoreFlowRunStore): Array<[string, () => Promise<unknown>]> {
  const run = makeFlowRun();
  return [
    ['create', () => store.create(run)],
    ['get', () => store.get(run.runId)],
    ['update', () => store.update(run.runId, { status: 'RUNNING' }, '1700000000.000000000')],
    ['list', () => store.list({ limit: 10 })],
  ];
}

describe('FirestoreFlowRunStore: Firestore failures', () => {
  const TRANSIENT = {
    UNAVAILABLE: GrpcStatus.UNAVAILABLE,
    DEADLINE_EXCEEDED: GrpcStatus.DEADLINE_EXCEEDED,
    RESOURCE_EXHAUSTED: GrpcStatus.RESOURCE_EXHAUSTED,
    ABORTED: GrpcStatus.ABORTED,
  };

  for (const [name, code] of Object.entries(TRANSIENT)) {
    it(`${name} from any operation is a retryable UPSTREAM_UNAVAILABLE FlowStoreError`, async () => {
      const cause = (): Error => grpcError(code, `${code} ${name}: the backend said no`);
      const store = new FirestoreFlowRunStore(failingFirestore(cause));
      for (const [operation, call] of operations(store)) {
        const error = await rejectionOf(call());
        expect(error, operation).toBeInstanceOf(FlowStoreError);
        expect(error).toMatchObject({
          code: 'UPSTREAM_UNAVAILABLE',
          retryable: true,
          details: { operation, grpcStatus: name },
        });
        // the client's message stays in the cause (logs), out of the API-facing message
        expect((error as FlowStoreError).message).not.toContain('the backend said no');
        expect((error as Error).cause).toMatchObject({ code });
      }
    });
  }

  it('anything else is left as the client raised it (INTERNAL, PERMISSION_DENIED, no code)', async () => {
    const errors = [
      grpcError(GrpcStatus.INTERNAL),
      grpcError(GrpcStatus.PERMISSION_DENIED),
      grpcError(GrpcStatus.INVALID_ARGUMENT),
      new Error('Could not load the default credentials'),
    ];
    for (const original of errors) {
      const store = new FirestoreFlowRunStore(failingFirestore(() => original));
      for (const [, call] of operations(store)) expect(await rejectionOf(call())).toBe(original);
    }
  });

  it('keeps the meaning of ALREADY_EXISTS on create', async () => {
    const store = new FirestoreFlowRunStore(
      failingFirestore(() => grpcError(GrpcStatus.ALREADY_EXISTS)),
    );
    expect(await rejectionOf(store.create(makeFlowRun()))).toBeInstanceOf(RunAlreadyExistsError);
  });
});
