import { describe, expect, it } from 'vitest';
import { citationCheck, CITATION_RULES } from './aggregate-citations';
import { validAggregateOutput } from './testing';

const A = 'rpt_aaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'rpt_bbbbbbbbbbbbbbbbbbbbbbbb';
const check = citationCheck([A, B]);

describe('citationCheck', () => {
  it('accepts citations of input reports, without requiring one per input', () => {
    expect(check(validAggregateOutput([A, B, A]))).toEqual([]);
    expect(check(validAggregateOutput([B]))).toEqual([]);
  });

  it('names every citation of an unknown report by path, never by the cited text', () => {
    const invented = 'rpt_CANARY_invented_by_the_model';
    const violations = check(validAggregateOutput([A, invented, 'rpt_cccccccccccccccccccccccc']));
    expect(violations).toEqual([
      {
        rule: CITATION_RULES.unknownReport,
        path: '/details/citations/1/reportId',
        message: 'must be one of the 2 reportIds listed in UserInput, exactly as written there',
      },
      expect.objectContaining({ path: '/details/citations/2/reportId' }),
    ]);
    expect(JSON.stringify(violations)).not.toContain('CANARY');
  });

  it('a citation without a reportId string is unknown too', () => {
    const output = validAggregateOutput([A]);
    (output['details'] as { citations: unknown[] }).citations.push({ claim: 'no id' }, 'text');
    expect(check(output).map((v) => v.path)).toEqual([
      '/details/citations/1/reportId',
      '/details/citations/2/reportId',
    ]);
  });

  it('requires at least one citation', () => {
    const required = [expect.objectContaining({ rule: CITATION_RULES.required })];
    expect(check(validAggregateOutput([]))).toEqual(required);
    const output = validAggregateOutput([A]);
    delete (output['details'] as Record<string, unknown>)['citations'];
    expect(check(output)).toEqual(required);
    expect(check({ summary: { markdown: 'x' } })).toEqual(required);
  });
});
