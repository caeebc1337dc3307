import type { RunScope } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { getFlow, listFlows } from './flow-catalogue';

/** A value the schema allows: its example, default, minimum, or the first enum value. */
function sample(schema: Record<string, unknown>): unknown {
  const examples = schema['examples'];
  if (Array.isArray(examples)) return examples[0];
  if (schema['default'] !== undefined) return schema['default'];
  if (schema['format'] === 'date-time') return '2026-09-01T00:00:00Z';
  if (schema['type'] === 'integer' || schema['type'] === 'number') return schema['minimum'];
  if (schema['type'] === 'array') {
    const items = (schema['items'] ?? {}) as { enum?: unknown[]; pattern?: string };
    return items.enum !== undefined ? [items.enum[0]] : [`rpt_${'a'.repeat(24)}`];
  }
  return 'x';
}

describe('flow scope schemas (GET /flows)', () => {
  it.each(listFlows().map((f) => [f.flowKey, f] as const))(
    '%s: every property is a field the flow accepts, required ones suffice, others are refused',
    (flowKey, summary) => {
      const flow = getFlow(flowKey);
      const { properties, required } = summary.scopeSchema;
      expect(required).toContain('symbol');
      const minimal = Object.fromEntries(required.map((k) => [k, sample(properties[k] ?? {})]));
      expect(() => flow.resolveScope(minimal as RunScope)).not.toThrow();
      const full = Object.fromEntries(
        Object.entries(properties).map(([k, schema]) => [k, sample(schema)]),
      );
      expect(() => flow.resolveScope(full as RunScope)).not.toThrow();
      expect(() => flow.resolveScope({ ...minimal, bogus: 1 } as unknown as RunScope)).toThrow(
        /bogus/,
      );
      expect(properties).not.toHaveProperty('reportRefs');
    },
  );

  it('states each flow’s default timeframes, longest first', () => {
    const timeframes = (key: string) =>
      listFlows().find((f) => f.flowKey === key)?.scopeSchema.properties['timeframes']?.['default'];
    expect(timeframes('market_charts_v1')).toEqual(['1M', '1w']);
    expect(timeframes('recommendation_with_account_v1')).toEqual(['1w', '1d', '4h']);
  });
});
