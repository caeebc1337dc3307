import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export type LogRecord = Record<string, unknown>;

export interface StartWorkerProcessOptions {
  /** Repository root (node_modules/.bin/node, tsconfig.runtime.json). */
  root: string;
  /** The entry point, relative to the root. */
  main: string;
  /** The complete environment of the child (nothing is inherited). */
  env: Record<string, string>;
  /** How long the boot may take before it counts as failed. */
  bootTimeoutMs?: number;
}

/**
 * A worker service running as a real child process (Node 24 of the workspace with SWC at run
 * time, like `npm start`), with its JSON log lines parsed as they arrive so a test can follow
 * what it does and kill it at a chosen moment.
 */
export class WorkerProcess {
  readonly logs: LogRecord[] = [];
  /** Lines that were not JSON (stderr, a crash trace): kept for error messages. */
  readonly text: string[] = [];
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(private readonly child: ChildProcessByStdio<null, Readable, Readable>) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve({ code, signal });
      }),
    );
    this.follow(child.stdout);
    this.follow(child.stderr);
  }

  static async start(options: StartWorkerProcessOptions): Promise<WorkerProcess> {
    const child = spawn(
      join(options.root, 'node_modules/.bin/node'),
      ['-r', '@swc-node/register', join(options.root, options.main)],
      {
        cwd: options.root,
        env: { ...options.env, SWC_NODE_PROJECT: join(options.root, 'tsconfig.runtime.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const worker = new WorkerProcess(child);
    const timeoutMs = options.bootTimeoutMs ?? 60_000;
    const started = Date.now();
    while (worker.withEvent('service_started').length === 0) {
      if (worker.exitInfo !== undefined || Date.now() - started > timeoutMs) {
        await worker.kill();
        throw new Error(
          `${options.main} did not start (${worker.exitInfo === undefined ? 'timeout' : `exit ${JSON.stringify(worker.exitInfo)}`}): ${worker.tail()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  withEvent(event: string): LogRecord[] {
    return this.logs.filter((record) => record['event'] === event);
  }

  /** SIGKILL: no drain, no shutdown hook, the lease stays behind (the point of the exercise). */
  async kill(): Promise<void> {
    if (this.exitInfo === undefined) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGSTOP: frozen as by a long stall (no heartbeat, no I/O) until `resume`. */
  pause(): void {
    if (this.exitInfo === undefined) this.child.kill('SIGSTOP');
  }

  resume(): void {
    if (this.exitInfo === undefined) this.child.kill('SIGCONT');
  }

  /** SIGTERM (graceful drain), SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.exitInfo !== undefined) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  tail(lines = 20): string {
    return [...this.text, ...this.logs.map((record) => JSON.stringify(record))]
      .slice(-lines)
      .join('\n');
  }

  private follow(stream: Readable): void {
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        this.take(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    });
    stream.on('end', () => this.take(buffer));
  }

  private take(line: string): void {
    if (line.trim() === '') return;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        this.logs.push({ ...(parsed as LogRecord), pid: this.pid });
        return;
      }
    } catch {
      // not a log line
    }
    this.text.push(line);
  }
}
