import type { Firestore } from '@google-cloud/firestore';

/** An error as the Firestore client raises it: the gRPC status number on `code`. */
export function grpcError(code: number, message = `${code} gRPC status ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A Firestore whose every call fails with `error` (an outage, a quota, a permission problem),
 * for the adapter's error mapping without an emulator: document get/create/update, queries and
 * transactions. Only what FirestoreFlowRunStore touches.
 */
export function failingFirestore(error: () => Error): Firestore {
  const fail = (): Promise<never> => Promise.reject(error());
  const query: Record<string, unknown> = { get: fail };
  for (const method of ['where', 'orderBy', 'startAfter', 'limit']) query[method] = () => query;
  query['count'] = () => ({ get: fail });
  const doc = { get: fail, create: fail, update: fail };
  const collection = { ...query, doc: () => doc };
  return { collection: () => collection, runTransaction: fail } as unknown as Firestore;
}
