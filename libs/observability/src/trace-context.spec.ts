import { describe, expect, it } from 'vitest';
import {
  childTraceparent,
  cloudTraceFields,
  formatTraceparent,
  generateTraceparent,
  parseTraceparent,
} from './trace-context';

describe('W3C trace context', () => {
  it('parses a valid traceparent and round-trips it', () => {
    const value = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const parsed = parseTraceparent(value);
    expect(parsed).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parsed && formatTraceparent(parsed)).toBe(value);
    expect(parseTraceparent(value.replace(/-01$/, '-00'))?.sampled).toBe(false);
  });

  it('rejects malformed, all-zero and version ff values', () => {
    for (const bad of [
      undefined,
      '',
      'nonsense',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });

  it('generates valid, distinct traces and keeps the trace id for a child hop', () => {
    const a = generateTraceparent();
    const b = generateTraceparent();
    expect(parseTraceparent(a)).toBeDefined();
    expect(parseTraceparent(a)?.traceId).not.toBe(parseTraceparent(b)?.traceId);
    const child = childTraceparent(a);
    expect(parseTraceparent(child)?.traceId).toBe(parseTraceparent(a)?.traceId);
    expect(parseTraceparent(child)?.spanId).not.toBe(parseTraceparent(a)?.spanId);
    expect(parseTraceparent(childTraceparent('junk'))).toBeDefined();
  });

  it('builds the Cloud Logging trace fields', () => {
    const value = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
    expect(cloudTraceFields(value, 'p')).toEqual({
      'logging.googleapis.com/trace': 'projects/p/traces/4bf92f3577b34da6a3ce929d0e0e4736',
      'logging.googleapis.com/spanId': '00f067aa0ba902b7',
      'logging.googleapis.com/trace_sampled': false,
    });
    expect(cloudTraceFields(undefined, 'p')).toEqual({});
  });
});
