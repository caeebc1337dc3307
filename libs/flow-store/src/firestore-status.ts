import { GrpcStatus } from '@google-cloud/firestore';

/** The gRPC status the Node client puts on `error.code` (numbers: the client's GrpcStatus). */
export function firestoreGrpcCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'number' ? error.code : undefined;
}

/**
 * The statuses of a Firestore that cannot serve the call now but may in a moment — what Google
 * documents as "retry with backoff": UNAVAILABLE (outage, network), DEADLINE_EXCEEDED (no answer
 * in time), RESOURCE_EXHAUSTED (quota, overload), ABORTED (contention; an update's ABORTED is
 * first read as its precondition failing). Not INTERNAL: grpc-js also reports its own
 * client-side failures (serialization, protocol) with it, which no retry fixes, so it stays an
 * unexpected error (500, logged). Everything else (permissions, bad arguments) is not transient
 * either. Every Firestore adapter maps these to its retryable "unavailable" error.
 */
export const FIRESTORE_TRANSIENT_STATUSES: ReadonlySet<number> = new Set([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
]);

/** The transient status of a client error (its name, e.g. UNAVAILABLE), or undefined. */
export function transientFirestoreStatus(error: unknown): string | undefined {
  const code = firestoreGrpcCode(error);
  if (code === undefined || !FIRESTORE_TRANSIENT_STATUSES.has(code)) return undefined;
  return GrpcStatus[code] ?? String(code);
}

/**
 * A Firestore call whose transient failure becomes the adapter's own retryable error
 * (`unavailable(status, cause)`); any other failure is rethrown unchanged.
 */
export async function guardFirestoreCall<T>(
  call: () => Promise<T>,
  unavailable: (status: string, cause: unknown) => Error,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const status = transientFirestoreStatus(error);
    throw status === undefined ? error : unavailable(status, error);
  }
}
