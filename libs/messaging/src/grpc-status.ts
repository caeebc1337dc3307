/** gRPC status codes the Pub/Sub client reports in `error.code` (the ones this library maps). */
export const GRPC_DEADLINE_EXCEEDED = 4;
export const GRPC_NOT_FOUND = 5;
export const GRPC_ALREADY_EXISTS = 6;
export const GRPC_FAILED_PRECONDITION = 9;

/** The numeric gRPC status of a client error, undefined for anything else. */
export function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
