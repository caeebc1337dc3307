import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './keyed-mutex';

describe('KeyedMutex', () => {
  it('runs work for one key one at a time in arrival order, other keys in parallel', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name}:start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`${name}:end`);
      return name;
    };
    const results = await Promise.all([
      mutex.run('k', step('a1', 20)),
      mutex.run('k', step('a2', 1)),
      mutex.run('other', step('b', 5)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b']);
    expect(log.indexOf('a2:start')).toBeGreaterThan(log.indexOf('a1:end'));
    expect(log.indexOf('b:start')).toBeLessThan(log.indexOf('a1:end'));
    expect(mutex.size).toBe(0);
  });

  it('releases the key when the work throws', async () => {
    const mutex = new KeyedMutex();
    await expect(mutex.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(mutex.run('k', () => Promise.resolve('next'))).resolves.toBe('next');
    expect(mutex.size).toBe(0);
  });
});
