import { ConfigError } from '@tda/config';
import { createMemoryLogger } from '@tda/observability';
import { describe, expect, it } from 'vitest';
import {
  runServiceMain,
  ServiceDisabledError,
  type ShutdownSignal,
  type ServiceProcess,
} from './service-main';

/** Records the signal listeners and the exit code, like the parts of `process` main.ts uses. */
class FakeProcess implements ServiceProcess {
  exitCode: number | string | null | undefined = undefined;
  readonly listeners = new Map<ShutdownSignal, () => void>();

  once(signal: ShutdownSignal, listener: () => void): this {
    this.listeners.set(signal, listener);
    return this;
  }

  emit(signal: ShutdownSignal): void {
    const listener = this.listeners.get(signal);
    if (listener === undefined) throw new Error(`no ${signal} listener`);
    listener();
  }
}

function booted(close: () => Promise<void> = () => Promise.resolve()) {
  const log = createMemoryLogger();
  let closes = 0;
  return {
    log,
    closes: () => closes,
    boot: () =>
      Promise.resolve({
        logger: log.logger,
        close: () => {
          closes += 1;
          return close();
        },
      }),
  };
}

describe('runServiceMain', () => {
  it('a disabled service logs service_disabled with its reason and exits 0 (seed 003 toggle)', async () => {
    const proc = new FakeProcess();
    const fallback = createMemoryLogger();
    const result = await runServiceMain({
      service: 'worker-backtest',
      boot: () => Promise.reject(new ServiceDisabledError('worker-backtest', 'switched off')),
      process: proc,
      logger: fallback.logger,
    });
    expect(result).toBeUndefined();
    expect(proc.exitCode).toBe(0);
    expect(proc.listeners.size).toBe(0);
    expect(fallback.withEvent('service_disabled')).toEqual([
      expect.objectContaining({ reason: 'switched off', severity: 'INFO' }),
    ]);
  });

  it('reports an invalid configuration as config_invalid with exit code 1', async () => {
    const proc = new FakeProcess();
    const fallback = createMemoryLogger();
    const result = await runServiceMain({
      service: 'worker-x',
      boot: () => Promise.reject(new ConfigError('worker-x', ['PORT: must be a number'])),
      process: proc,
      logger: fallback.logger,
    });
    expect(result).toBeUndefined();
    expect(proc.exitCode).toBe(1);
    expect(fallback.withEvent('config_invalid')).toEqual([
      expect.objectContaining({ severity: 'CRITICAL', problems: ['PORT: must be a number'] }),
    ]);
    expect(fallback.withEvent('service_failed')).toHaveLength(0);
    expect(proc.listeners.size).toBe(0);
  });

  it('reports any other boot failure as service_failed with exit code 1', async () => {
    const proc = new FakeProcess();
    const fallback = createMemoryLogger();
    await runServiceMain({
      service: 'worker-x',
      boot: () => Promise.reject(new Error('connect ECONNREFUSED')),
      process: proc,
      logger: fallback.logger,
    });
    expect(proc.exitCode).toBe(1);
    expect(fallback.withEvent('service_failed')).toEqual([
      expect.objectContaining({
        severity: 'CRITICAL',
        message: 'worker-x failed to start',
        error: expect.objectContaining({ message: 'connect ECONNREFUSED' }),
      }),
    ]);
    expect(fallback.withEvent('config_invalid')).toHaveLength(0);
  });

  it('closes once on SIGTERM then SIGINT and logs service_stopped with the first signal', async () => {
    const proc = new FakeProcess();
    const service = booted();
    const running = await runServiceMain({
      service: 'worker-x',
      boot: service.boot,
      process: proc,
    });
    expect(running).toBeDefined();
    expect([...proc.listeners.keys()].sort()).toEqual(['SIGINT', 'SIGTERM']);
    expect(service.closes()).toBe(0);

    proc.emit('SIGTERM');
    proc.emit('SIGINT');
    await running?.stop('SIGTERM');
    expect(service.closes()).toBe(1);
    expect(service.log.withEvent('service_stopped')).toEqual([
      expect.objectContaining({ signal: 'SIGTERM' }),
    ]);
    expect(proc.exitCode).toBeUndefined();
  });

  it('reports a failed shutdown as service_failed with exit code 1', async () => {
    const proc = new FakeProcess();
    const service = booted(() => Promise.reject(new Error('drain failed')));
    const running = await runServiceMain({
      service: 'worker-x',
      boot: service.boot,
      process: proc,
    });
    proc.emit('SIGINT');
    await running?.stop('SIGINT');
    expect(service.closes()).toBe(1);
    expect(proc.exitCode).toBe(1);
    expect(service.log.withEvent('service_failed')).toEqual([
      expect.objectContaining({
        signal: 'SIGINT',
        message: 'shutdown failed',
        error: expect.objectContaining({ message: 'drain failed' }),
      }),
    ]);
    expect(service.log.withEvent('service_stopped')).toHaveLength(0);
  });
});
