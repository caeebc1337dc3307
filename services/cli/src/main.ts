import { resolveApiTarget } from './cli-config';
import { runCli } from './cli';
import { exitQuietlyWhenStdoutCloses } from './closed-stdout';

// Once for every command: `tda … | head` must not end in an EPIPE stack trace.
exitQuietlyWhenStdoutCloses(process.stdout, (code) => process.exit(code));

void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  target: () => resolveApiTarget(),
}).then((code) => {
  process.exitCode = code;
  // A failed command leaves nothing worth waiting for, but may leave a client's request pending
  // (a credential lookup on a metadata server that never answers): do not wait for it.
  if (code !== 0) process.exit(code);
});
