import { mergeStudies, type ChartStudies } from './chart-studies';
import type { ChartTemplate } from './chart-template';
import { ChartError, UnknownChartTemplateError } from './charts.errors';
import { defaultChartTemplate } from './templates/default.template';
import { macdChartTemplate } from './templates/macd.template';
import { priceEmaChartTemplate } from './templates/price-ema.template';
import { rsiChartTemplate } from './templates/rsi.template';

/** charts_manifest ChartTemplateId / ChartKind patterns (they become object names). */
const TEMPLATE_ID_PATTERN = /^[a-z][a-z0-9_]*_v[0-9]+$/;
const KIND_PATTERN = /^[a-z][a-z0-9_]*$/;

/** A chart request as a manifest records it. */
export interface ChartRequestRef {
  chartTemplateId: string;
  params?: Record<string, unknown> | undefined;
}

/** The templates a worker can render, by id. Versioned ids: a changed look gets a new _vN. */
export class ChartTemplateRegistry {
  private readonly byId = new Map<string, ChartTemplate>();

  constructor(templates: readonly ChartTemplate[]) {
    for (const template of templates) {
      if (!TEMPLATE_ID_PATTERN.test(template.id) || template.id.length > 100) {
        throw new Error(`chart template id '${template.id}' is not a versioned storage-safe id`);
      }
      if (!KIND_PATTERN.test(template.kind) || template.kind.length > 50) {
        throw new Error(`chart template ${template.id} has an invalid kind '${template.kind}'`);
      }
      if (this.byId.has(template.id))
        throw new Error(`duplicate chart template id '${template.id}'`);
      this.byId.set(template.id, template);
    }
  }

  /** Throws UnknownChartTemplateError naming the available ids. */
  get(id: string): ChartTemplate {
    const template = this.byId.get(id);
    if (template === undefined) throw new UnknownChartTemplateError(id, this.ids());
    return template;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Sorted, for stable error messages and listings. */
  ids(): string[] {
    return [...this.byId.keys()].sort();
  }

  /**
   * The studies that these chart requests (a charts manifest's `requested[]`) draw, merged; null
   * when none of them resolves. A request this registry cannot bind (an id or params of another
   * version) contributes nothing rather than failing the reader of an older manifest.
   */
  studiesOf(requests: readonly ChartRequestRef[]): ChartStudies | null {
    const resolved: ChartStudies[] = [];
    for (const request of requests) {
      try {
        resolved.push(this.get(request.chartTemplateId).bind(request.params).studies);
      } catch (error) {
        if (!(error instanceof ChartError)) throw error;
      }
    }
    return resolved.length === 0 ? null : mergeStudies(resolved);
  }

  list(): ChartTemplate[] {
    return this.ids().flatMap((id) => {
      const template = this.byId.get(id);
      return template === undefined ? [] : [template];
    });
  }
}

export const DEFAULT_CHART_TEMPLATES: readonly ChartTemplate[] = [
  defaultChartTemplate,
  priceEmaChartTemplate,
  rsiChartTemplate,
  macdChartTemplate,
];

export function createDefaultChartTemplateRegistry(): ChartTemplateRegistry {
  return new ChartTemplateRegistry(DEFAULT_CHART_TEMPLATES);
}
