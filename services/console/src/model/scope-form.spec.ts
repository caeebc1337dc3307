import { describe, expect, it } from 'vitest';
import {
  fromDatetimeInput,
  humanize,
  initialValues,
  scopeFormFromSchema,
  toDatetimeInput,
} from './scope-form';
import { toScope, validateScope } from './scope-form-validate';

/** A scope schema like the ones GET /flows gives (flow 1 with an account). */
const SCHEMA = {
  type: 'object',
  required: ['symbol', 'timeframes'],
  properties: {
    symbol: { type: 'string', enum: ['BTC-USDT', 'ETH-USDT'], description: 'Market' },
    timeframes: {
      type: 'array',
      items: { type: 'string', enum: ['1M', '1w', '1d'] },
      minItems: 1,
      uniqueItems: true,
      default: ['1d'],
    },
    asOf: { type: 'string', format: 'date-time', title: 'As of (UTC)' },
    accountId: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,63}$', examples: ['demo'] },
    reportIds: { type: 'array', items: { type: 'string', pattern: '^rpt_[a-z0-9]{3}$' } },
    lookback: { type: 'integer', minimum: 10, maximum: 500 },
    dryRun: { type: 'boolean' },
    extra: { type: 'object' },
    version: { const: 1 },
  },
};

describe('scope form from a JSON Schema', () => {
  const form = scopeFormFromSchema(SCHEMA);
  const field = (name: string) => form.fields.find((f) => f.name === name);

  it('picks a control per property: select, checkboxes, datetime, text, number, checkbox, JSON', () => {
    expect(form.fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['symbol', 'select', true],
      ['timeframes', 'checkboxes', true],
      ['asOf', 'datetime', false],
      ['accountId', 'text', false],
      ['reportIds', 'list', false],
      ['lookback', 'number', false],
      ['dryRun', 'boolean', false],
      ['extra', 'json', false],
    ]);
    expect(field('symbol')).toMatchObject({
      options: ['BTC-USDT', 'ETH-USDT'],
      description: 'Market',
    });
    expect(field('timeframes')).toMatchObject({ options: ['1M', '1w', '1d'], minItems: 1 });
    expect(field('asOf')?.label).toBe('As of (UTC)');
    expect(field('accountId')).toMatchObject({ label: 'Account id', placeholder: 'e.g. demo' });
    expect(field('reportIds')?.itemPattern).toBe('^rpt_[a-z0-9]{3}$');
    expect(field('lookback')).toMatchObject({ integer: true, minimum: 10, maximum: 500 });
  });

  it('starts from the schema defaults', () => {
    expect(initialValues(form)).toEqual({
      symbol: '',
      timeframes: ['1d'],
      asOf: '',
      accountId: '',
      reportIds: '',
      lookback: '',
      dryRun: false,
      extra: '',
    });
  });

  it('has no fields without a usable schema', () => {
    expect(scopeFormFromSchema(undefined).fields).toEqual([]);
    expect(scopeFormFromSchema({ type: 'object' }).fields).toEqual([]);
  });

  it('explains every problem next to its field', () => {
    const problems = validateScope(form, {
      symbol: '',
      timeframes: [],
      asOf: '2026-13-40T99:00',
      accountId: 'Bad Id',
      reportIds: 'rpt_abc, nope, rpt_abc',
      lookback: '3.5',
      dryRun: false,
      extra: '[1]',
    });
    expect(problems).toEqual({
      symbol: 'Required',
      timeframes: 'Required',
      asOf: 'Not a valid date and time',
      accountId: 'Not a valid account id',
      reportIds: 'Not valid: nope',
      lookback: 'Must be a whole number',
      extra: 'Must be a JSON object',
    });
    expect(validateScope(form, { ...initialValues(form), symbol: 'DOGE', lookback: '9' })).toEqual({
      symbol: 'Choose one of BTC-USDT, ETH-USDT',
      lookback: 'At least 10',
    });
  });

  it('submits the typed scope, optional blanks left out, choices in schema order', () => {
    const values = {
      ...initialValues(form),
      symbol: 'ETH-USDT',
      timeframes: ['1d', '1M'],
      asOf: '2026-09-20T06:30',
      reportIds: 'rpt_abc, rpt_x12',
      lookback: '120',
      dryRun: true,
      extra: '{"a":1}',
    };
    expect(validateScope(form, values)).toEqual({});
    expect(toScope(form, values)).toEqual({
      symbol: 'ETH-USDT',
      timeframes: ['1M', '1d'],
      asOf: '2026-09-20T06:30:00Z',
      reportIds: ['rpt_abc', 'rpt_x12'],
      lookback: 120,
      dryRun: true,
      extra: { a: 1 },
    });
    expect(toScope(form, { ...values, asOf: '', dryRun: false, extra: '' })).not.toHaveProperty(
      'asOf',
    );
  });
});

describe('helpers', () => {
  it('humanize property names', () => {
    expect(humanize('asOf')).toBe('As of');
    expect(humanize('max_items')).toBe('Max items');
  });

  it('read datetime-local values as UTC and back', () => {
    expect(fromDatetimeInput('2026-01-02T03:04')).toBe('2026-01-02T03:04:00Z');
    expect(fromDatetimeInput('2026-01-02T03:04:05')).toBe('2026-01-02T03:04:05Z');
    expect(fromDatetimeInput('yesterday')).toBeUndefined();
    expect(toDatetimeInput('2026-01-02T03:04:00Z')).toBe('2026-01-02T03:04');
  });
});
