import {
  ChartError,
  ChartRenderer,
  type BoundChart,
  type ChartSeriesInput,
  type RenderedChart,
} from '@tda/charts';
import type {
  ChartExportInputs,
  ChartFailure,
  ChartItem,
  ChartRequest,
  ChartsManifest,
} from '@tda/contracts';
import { CHART_EXPORT_STEP } from '@tda/step-types';
import {
  StepInputError,
  type ExistingArtifact,
  type StepArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import {
  buildChartsManifest,
  canonicalize,
  manifestOutcome,
  serializeManifest,
} from './charts-manifest';

type Context = StepContext<typeof CHART_EXPORT_STEP>;

/** One request: what the manifest records plus the template bound to its params. */
export interface ChartExportRequest {
  chartTemplateId: string;
  kind: string;
  params?: Record<string, unknown>;
  chart: BoundChart;
}

export interface ChartExportHandlerOptions {
  renderer: ChartRenderer;
}

/**
 * CHART_EXPORT (seed 000 partial success): draws every requested chart of the OHLCV export
 * (ctx.upstream('ohlcv'), validated by the harness) to PNG and writes the PNGs then the charts
 * manifest (primary). One failing chart does not sink the others: it is listed in `failures[]`;
 * the step SUCCEEDS when at least `minImages` charts were rendered, otherwise it FAILS with the
 * manifest written. The inputs schema is checked by the harness; what it cannot say (known
 * templates and params, no template twice, minImages within the requests) is checked here.
 */
export class ChartExportHandler implements StepHandler<typeof CHART_EXPORT_STEP> {
  readonly descriptor = CHART_EXPORT_STEP;
  readonly renderer: ChartRenderer;

  constructor(options: ChartExportHandlerOptions) {
    this.renderer = options.renderer;
  }

  async execute(context: Context): Promise<StepResult> {
    const { inputs, signal } = context;
    const requests = this.requests(inputs);
    const minImages = minImagesOf(inputs, requests.length);
    const ohlcv = await context.upstream('ohlcv');
    const series: ChartSeriesInput = {
      symbol: ohlcv.artifact.symbol,
      timeframe: ohlcv.artifact.timeframe,
      candles: ohlcv.artifact.candles,
    };
    const drawn = await this.render(context, requests, series);
    signal.throwIfAborted();
    const manifest = buildChartsManifest(
      {
        runId: context.run.runId,
        stepId: context.stepId,
        symbol: series.symbol,
        timeframe: series.timeframe,
        asOf: ohlcv.artifact.asOf,
        ohlcvGcsUri: ohlcv.uri,
        minImages,
      },
      requests.map(manifestRequest),
      drawn.items,
      drawn.failures,
    );
    const manifestUri = context.artifactUri('.json');
    return {
      // PNGs first: the manifest (primary, written last) existing means every image exists.
      artifacts: [
        ...drawn.pngs,
        { uri: manifestUri, data: serializeManifest(manifest), contentType: 'application/json' },
      ],
      primaryUri: manifestUri,
      ...manifestOutcome(manifest, manifestUri),
    };
  }

  /**
   * Split-brain recovery: finalize from the manifest of a crashed attempt (SUCCEEDED or FAILED by
   * the same minImages rule) when it was made for these inputs and every image it lists exists;
   * otherwise null, and the step is executed again (same bytes, create-only writes).
   */
  async recover(
    existing: ExistingArtifact<ChartsManifest>,
    context: Context,
  ): Promise<StepResult | null> {
    const manifest = existing.artifact;
    const requested = context.inputs.requests?.length ?? 1;
    if (manifest.minImages !== minImagesOf(context.inputs, requested)) return null;
    for (const item of manifest.items) {
      if (!(await context.artifacts.exists(item.gcs_uri))) return null;
    }
    return { artifacts: [], primaryUri: existing.uri, ...manifestOutcome(manifest, existing.uri) };
  }

  private async render(
    context: Context,
    requests: readonly ChartExportRequest[],
    series: ChartSeriesInput,
  ): Promise<{ pngs: StepArtifact[]; items: ChartItem[]; failures: ChartFailure[] }> {
    const { signal } = context;
    const pngs: StepArtifact[] = [];
    const items: ChartItem[] = [];
    const failures: ChartFailure[] = [];
    for (const [index, request] of requests.entries()) {
      signal.throwIfAborted();
      context.heartbeat({ stage: 'render', processedUnits: index, totalUnits: requests.length });
      let rendered: RenderedChart;
      try {
        rendered = await this.renderer.render(request.chart, series, { signal });
      } catch (error) {
        signal.throwIfAborted();
        failures.push(renderFailure(request.chartTemplateId, error));
        continue;
      }
      const uri = context.artifactUri(`.${request.chartTemplateId}.png`);
      pngs.push({ uri, data: rendered.png, contentType: 'image/png' });
      items.push(chartItem(rendered, uri));
    }
    return { pngs, items, failures };
  }

  /** seed 000: "requests[] (or simply chartTemplateId)", each bound to its template. */
  private requests(inputs: ChartExportInputs): ChartExportRequest[] {
    const list = inputs.requests ?? [{ chartTemplateId: inputs.chartTemplateId ?? '' }];
    if (inputs.chartTemplateId !== undefined) this.checkTemplate(inputs.chartTemplateId);
    const seen = new Set<string>();
    return list.map((entry, index) => {
      const field = inputs.requests === undefined ? 'chartTemplateId' : `requests[${index}]`;
      const { chartTemplateId: id, kind, params } = entry;
      if (seen.has(id)) {
        throw new StepInputError(`inputs.${field}: chartTemplateId '${id}' is requested twice`, {
          field,
          chartTemplateId: id,
        });
      }
      seen.add(id);
      const chart = this.bind(id, params, field);
      if (kind !== undefined && kind !== chart.kind) {
        throw new StepInputError(
          `inputs.${field}: template ${id} draws kind '${chart.kind}', not '${kind}'`,
          {
            field,
            chartTemplateId: id,
            kind: chart.kind,
          },
        );
      }
      return {
        chartTemplateId: id,
        kind: chart.kind,
        ...(params === undefined ? {} : { params }),
        chart,
      };
    });
  }

  /** The step-level template (part of the stepId) must exist too. */
  private checkTemplate(id: string): void {
    try {
      this.renderer.templates.get(id);
    } catch (error) {
      throw inputError(error, 'chartTemplateId');
    }
  }

  /** A template id or params the charts library refuses are the step's input problem. */
  private bind(id: string, params: Record<string, unknown> | undefined, field: string): BoundChart {
    try {
      return this.renderer.bind({ chartTemplateId: id, params });
    } catch (error) {
      throw inputError(error, field);
    }
  }
}

function inputError(error: unknown, field: string): unknown {
  if (error instanceof ChartError && error.code === 'INVALID_STEP_INPUTS') {
    return new StepInputError(`inputs.${field}: ${error.message}`, { field, ...error.details });
  }
  return error;
}

/** minImages (default: every request) may not exceed the number of requests. */
function minImagesOf(inputs: ChartExportInputs, requests: number): number {
  const minImages = inputs.minImages ?? requests;
  if (minImages > requests) {
    throw new StepInputError(
      `inputs.minImages must be an integer from 1 to ${requests} (the number of requests)`,
      { field: 'minImages', requests },
    );
  }
  return minImages;
}

function chartItem(rendered: RenderedChart, uri: string): ChartItem {
  return {
    chartTemplateId: rendered.chartTemplateId,
    kind: rendered.kind,
    gcs_uri: uri,
    contentType: 'image/png',
    width: rendered.width,
    height: rendered.height,
    bytes: rendered.bytes,
    sha256: rendered.sha256,
    description: rendered.description,
  };
}

function manifestRequest(request: ChartExportRequest): ChartRequest {
  return {
    chartTemplateId: request.chartTemplateId,
    kind: request.kind,
    ...(request.params === undefined
      ? {}
      : { params: canonicalize(request.params) as Record<string, unknown> }),
  };
}

function renderFailure(chartTemplateId: string, error: unknown): ChartFailure {
  if (error instanceof ChartError)
    return { chartTemplateId, code: error.code, message: error.message };
  // Unexpected: keep the message generic (it is persisted in the manifest), the class name helps.
  const name = error instanceof Error ? error.name : typeof error;
  return {
    chartTemplateId,
    code: 'INTERNAL_ERROR',
    message: `${chartTemplateId}: unexpected ${name} while rendering`,
  };
}
