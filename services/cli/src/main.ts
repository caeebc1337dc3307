import { resolveApiTarget } from './cli-config';
import { runCli } from './cli';

void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  target: () => resolveApiTarget(),
}).then((code) => {
  process.exitCode = code;
});
