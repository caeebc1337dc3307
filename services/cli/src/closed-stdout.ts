/** The part of process.stdout this needs (a test passes an EventEmitter). */
export interface ErrorEmitter {
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * `tda list | head -2`: once the reader of stdout has gone, every further write fails with EPIPE,
 * emitted as an 'error' event that would crash the CLI with a stack trace. Nothing more can reach
 * the reader, and what it wanted it got, so the CLI ends quietly with exit code 0 (as `yes | head`
 * does). Any other stdout error is rethrown: it is a real failure.
 */
export function exitQuietlyWhenStdoutCloses(
  stdout: ErrorEmitter,
  exit: (code: number) => void,
): void {
  stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    exit(0);
  });
}
