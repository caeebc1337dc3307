/**
 * The error `promise` rejects with, for assertions on its fields (`toMatchObject`,
 * `toBeInstanceOf`) beyond what `rejects` offers; a promise that resolves fails the test.
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection, but the call succeeded');
    },
    (error: unknown) => error,
  );
}
