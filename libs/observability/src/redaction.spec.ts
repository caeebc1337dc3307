import { describe, expect, it } from 'vitest';
import { withLogContext } from './log-context';
import { logEvent } from './logger';
import { createMemoryLogger } from './memory-logger';
import {
  REDACTED,
  buildRedactPaths,
  describeError,
  digestText,
  isSecretKey,
  redactSecrets,
  sanitizeForLog,
  sha256Hex,
} from './redaction';

describe('logger redaction', () => {
  it('censors secrets at the top level and nested up to four levels', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    logEvent(logger, 'info', 'config_invalid', {
      apiKey: 'k0',
      GEMINI_API_KEY: 'AIza-secret',
      req: { headers: { authorization: 'Bearer abc', 'x-api-key': 'k1', accept: 'json' } },
      config: { llm: { provider: { privateKey: '-----BEGIN', token: 't', model: 'gemini' } } },
      password: 'p',
    });
    const line = JSON.stringify(records[0]);
    for (const secret of ['k0', 'AIza-secret', 'Bearer abc', 'k1', '-----BEGIN', '"t"', '"p"']) {
      expect(line).not.toContain(secret);
    }
    expect(records[0]).toMatchObject({
      apiKey: REDACTED,
      GEMINI_API_KEY: REDACTED,
      password: REDACTED,
      req: { headers: { authorization: REDACTED, 'x-api-key': REDACTED, accept: 'json' } },
      config: { llm: { provider: { privateKey: REDACTED, token: REDACTED, model: 'gemini' } } },
    });
  });

  it('does not mutate the object that was logged', () => {
    const { logger } = createMemoryLogger({ service: 's' });
    const headers = { authorization: 'Bearer abc' };
    logEvent(logger, 'info', 'message_received', { headers });
    expect(headers.authorization).toBe('Bearer abc');
  });

  it('redacts context fields too', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    withLogContext({ token: 'secret-token' }, () => logEvent(logger, 'info', 'message_received'));
    expect(records[0]?.['token']).toBe(REDACTED);
  });

  it('censors secrets at any depth and inside arrays, whatever the spelling', () => {
    const { logger, records } = createMemoryLogger({ service: 's' });
    logEvent(logger, 'info', 'config_invalid', {
      a: { b: { c: { d: { e: { f: { Api_Key: 'deep-1', keep: 'visible' } } } } } },
      list: [{ name: 'x', clientSecret: 'deep-2' }],
    });
    const line = JSON.stringify(records[0]);
    expect(line).not.toContain('deep-1');
    expect(line).not.toContain('deep-2');
    expect(line).toContain('visible');
  });

  it('builds explicit pino paths (no leading wildcards, which cost ~50 µs a line each)', () => {
    const paths = buildRedactPaths();
    expect(paths).toContain('["x-api-key"]');
    expect(paths).toContain('headers["x-api-key"]');
    expect(paths).toContain('req.headers.authorization');
    expect(paths).toContain('GEMINI_API_KEY');
    expect(paths.filter((p) => p.startsWith('*'))).toEqual([]);
  });
});

describe('redactSecrets', () => {
  it('returns the same object when there is nothing to redact', () => {
    const value = { a: { b: [1, { c: 'x' }] } };
    expect(redactSecrets(value)).toBe(value);
  });

  it('copies only the branches holding a secret and leaves the input untouched', () => {
    const clean = { big: 'unchanged' };
    const value = { clean, nested: { password: 'p', other: 1 } };
    const result = redactSecrets(value);
    expect(result).toEqual({ clean, nested: { password: REDACTED, other: 1 } });
    expect(result.clean).toBe(clean);
    expect(value.nested.password).toBe('p');
  });

  it('walks own keys only, as a log line serialises them', () => {
    const inherited: Record<string, unknown> = Object.create({ password: 'from the prototype' });
    inherited['token'] = 't';
    inherited['stepId'] = 's';
    const result = redactSecrets({ inherited });
    expect(Object.keys(result.inherited)).toEqual(['token', 'stepId']);
    expect(result.inherited).toEqual({ token: REDACTED, stepId: 's' });
    expect(Object.hasOwn(result.inherited, 'password')).toBe(false);
  });
});

describe('sanitizeForLog', () => {
  it('replaces long strings with length + sha256 and keeps short ones', () => {
    const prompt = 'Analyse BTC/USDT on the daily chart. '.repeat(40);
    const result = sanitizeForLog({ prompt, symbol: 'BTCUSDT' });
    expect(result).toEqual({
      prompt: { length: prompt.length, sha256: sha256Hex(prompt) },
      symbol: 'BTCUSDT',
    });
    expect(JSON.stringify(result)).not.toContain('Analyse');
  });

  it('redacts secret keys at any depth, whatever their spelling', () => {
    const deep = {
      a: { b: { c: { d: { e: { f: { API_KEY: 'x', 'X-Api-Key': 'y', Token: 'z' } } } } } },
    };
    const text = JSON.stringify(sanitizeForLog(deep, { maxDepth: 20 }));
    expect(text).not.toMatch(/"[xyz]"/);
    expect(text.match(/\[REDACTED\]/g)).toHaveLength(3);
    expect(isSecretKey('client_secret')).toBe(true);
    expect(isSecretKey('stepId')).toBe(false);
  });

  it('digests buffers, cuts cycles, depth and long arrays, and returns plain JSON', () => {
    type Node = { name: string; self?: Node; when: Date; data: Buffer; n: bigint };
    const node: Node = { name: 'n', when: new Date(0), data: Buffer.from('abc'), n: 10n };
    node.self = node;
    expect(sanitizeForLog(node)).toEqual({
      name: 'n',
      when: '1970-01-01T00:00:00.000Z',
      data: digestText(Buffer.from('abc')),
      n: '10',
      self: '[Circular]',
    });
    expect(sanitizeForLog({ a: { b: { c: 1 } } }, { maxDepth: 2 })).toEqual({
      a: { b: '[Truncated]' },
    });
    expect(sanitizeForLog([1, 2, 3, 4], { maxArrayLength: 2 })).toEqual([1, 2, '[+2 more]']);
  });

  it('describes errors by name, message, code and cause, without the stack', () => {
    const cause = new Error('socket hang up');
    const error = Object.assign(new Error('upstream failed', { cause }), { code: 'LLM_TIMEOUT' });
    expect(describeError(error)).toEqual({
      name: 'Error',
      message: 'upstream failed',
      code: 'LLM_TIMEOUT',
      cause: { name: 'Error', message: 'socket hang up' },
    });
    expect(describeError({ status: 'error', message: 'Internal server error' })).toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    expect(describeError('plain')).toBe('plain');
  });
});
