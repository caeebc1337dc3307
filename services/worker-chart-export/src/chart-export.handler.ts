import { ArtifactNotFoundError, parseGcsUri } from '@tda/artifacts';
import {
  ChartError,
  ChartRenderer,
  type BoundChart,
  type ChartSeriesInput,
  type RenderedChart,
} from '@tda/charts';
import {
  validate,
  type ChartFailure,
  type ChartItem,
  type ChartRequest,
  type ChartsManifest,
  type FlowRun,
  type FlowStep,
  type OhlcvExport,
  type ValidationIssue,
} from '@tda/contracts';
import { producingRunId } from '@tda/flow-engine';
import {
  StepError,
  StepInputError,
  type StepArtifact,
  type StepExecutionContext,
  type StepHandler,
  type StepRecoveryContext,
  type StepResult,
} from '@tda/worker-kit';
import {
  buildChartsManifest,
  canonicalize,
  manifestOutcome,
  serializeManifest,
} from './charts-manifest';

/** More would make the step slow and the LLM prompt heavy; flows ask for 1-3. */
export const MAX_CHART_REQUESTS = 12;

const INPUT_KEYS = ['ohlcvStepId', 'chartTemplateId', 'minImages', 'requests'] as const;
const REQUEST_KEYS = ['chartTemplateId', 'kind', 'params'] as const;

/** One validated request: what the manifest records plus the template bound to its params. */
export interface ChartExportRequest {
  chartTemplateId: string;
  kind: string;
  params?: Record<string, unknown>;
  chart: BoundChart;
}

/**
 * `steps.<id>.inputs` of a CHART_EXPORT step after validation (flow catalogue: ohlcvStepId,
 * chartTemplateId, minImages, requests[]), plus the resolved upstream artifact URI.
 */
export interface ChartExportInputs {
  ohlcvStepId: string;
  /** steps[ohlcvStepId].outputs.gcs_uri */
  ohlcvGcsUri: string;
  /** The step-level template (part of the stepId); seed 000's shorthand for a single request. */
  chartTemplateId?: string;
  minImages: number;
  requests: ChartExportRequest[];
}

export interface ChartExportHandlerOptions {
  renderer: ChartRenderer;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unknownKeys(value: Record<string, unknown>, allowed: readonly string[]): string[] {
  return Object.keys(value)
    .filter((key) => !allowed.includes(key))
    .sort();
}

function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path || '/'} ${i.message}`)
    .join('; ');
}

/** A chart library input error (bad template id / params) as the step's input error. */
function asInputError(error: unknown, field: string): never {
  if (error instanceof ChartError && error.code === 'INVALID_STEP_INPUTS') {
    throw new StepInputError(`inputs.${field}: ${error.message}`, { field, ...error.details });
  }
  throw error;
}

/**
 * CHART_EXPORT (seed 000 partial success): reads the OHLCV artifact of `inputs.ohlcvStepId`,
 * renders every requested chart to PNG, and writes the PNGs then the charts manifest (primary).
 * One failing chart does not sink the others: it is listed in `failures[]`; the step SUCCEEDS
 * when at least `minImages` charts were rendered, otherwise it FAILS with the manifest written.
 */
export class ChartExportHandler implements StepHandler<ChartExportInputs> {
  readonly stepType = 'CHART_EXPORT' as const;
  readonly renderer: ChartRenderer;

  constructor(options: ChartExportHandlerOptions) {
    this.renderer = options.renderer;
  }

  validateInputs(run: FlowRun, stepId: string, step: FlowStep): ChartExportInputs {
    const inputs = step.inputs;
    const extra = unknownKeys(inputs, INPUT_KEYS);
    if (extra.length > 0) {
      throw new StepInputError(`inputs has unknown fields: ${extra.join(', ')}`, {
        unknownFields: extra,
        allowed: [...INPUT_KEYS],
      });
    }
    const { ohlcvStepId, ohlcvGcsUri } = this.upstream(run, stepId, step);

    const rawTemplateId = inputs['chartTemplateId'];
    let chartTemplateId: string | undefined;
    if (rawTemplateId !== undefined) {
      if (typeof rawTemplateId !== 'string') {
        throw new StepInputError('inputs.chartTemplateId must be a string', {
          field: 'chartTemplateId',
        });
      }
      try {
        this.renderer.templates.get(rawTemplateId);
      } catch (error) {
        asInputError(error, 'chartTemplateId');
      }
      chartTemplateId = rawTemplateId;
    }

    const requests = this.requests(inputs['requests'], chartTemplateId);
    const minImages = inputs['minImages'] ?? requests.length;
    if (
      typeof minImages !== 'number' ||
      !Number.isInteger(minImages) ||
      minImages < 1 ||
      minImages > requests.length
    ) {
      throw new StepInputError(
        `inputs.minImages must be an integer from 1 to ${requests.length} (the number of requests)`,
        { field: 'minImages', requests: requests.length },
      );
    }
    return {
      ohlcvStepId,
      ohlcvGcsUri,
      ...(chartTemplateId === undefined ? {} : { chartTemplateId }),
      minImages,
      requests,
    };
  }

  async execute(context: StepExecutionContext<ChartExportInputs>): Promise<StepResult> {
    const { inputs, signal } = context;
    const ohlcv = await this.readOhlcv(context);
    const series: ChartSeriesInput = {
      symbol: ohlcv.symbol,
      timeframe: ohlcv.timeframe,
      candles: ohlcv.candles,
    };

    const pngs: StepArtifact[] = [];
    const items: ChartItem[] = [];
    const failures: ChartFailure[] = [];
    for (const [index, request] of inputs.requests.entries()) {
      signal.throwIfAborted();
      context.heartbeat({
        stage: 'render',
        processedUnits: index,
        totalUnits: inputs.requests.length,
      });
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
      items.push({
        chartTemplateId: rendered.chartTemplateId,
        kind: rendered.kind,
        gcs_uri: uri,
        contentType: 'image/png',
        width: rendered.width,
        height: rendered.height,
        bytes: rendered.bytes,
        sha256: rendered.sha256,
        description: rendered.description,
      });
    }
    signal.throwIfAborted();

    const manifest = buildChartsManifest(
      {
        runId: context.run.runId,
        stepId: context.stepId,
        symbol: ohlcv.symbol,
        timeframe: ohlcv.timeframe,
        ohlcvGcsUri: inputs.ohlcvGcsUri,
        minImages: inputs.minImages,
      },
      inputs.requests.map(manifestRequest),
      items,
      failures,
    );
    const checked = validate.chartsManifest(manifest);
    if (!checked.ok) {
      // Our own output breaking the contract is a bug, never the caller's fault.
      throw new StepError(
        'INTERNAL_ERROR',
        `charts manifest fails its schema: ${describeIssues(checked.issues)}`,
      );
    }
    const manifestUri = context.artifactUri('.json');
    return {
      // PNGs first: the manifest (primary, written last) existing means every image exists.
      artifacts: [
        ...pngs,
        { uri: manifestUri, data: serializeManifest(manifest), contentType: 'application/json' },
      ],
      primaryUri: manifestUri,
      ...manifestOutcome(manifest, manifestUri),
    };
  }

  /**
   * Split-brain recovery: the manifest of a crashed attempt exists. Finalize from it (SUCCEEDED
   * or FAILED by the same minImages rule) when it is ours and every image it lists exists;
   * otherwise null, and the step is executed again (same bytes, create-only writes).
   */
  async recover(context: StepRecoveryContext<ChartExportInputs>): Promise<StepResult | null> {
    const manifest = parseManifest(await context.artifacts.read(context.existingUri));
    if (
      manifest === null ||
      manifest.runId !== context.run.runId ||
      manifest.stepId !== context.stepId ||
      manifest.minImages !== context.inputs.minImages
    ) {
      return null;
    }
    for (const item of manifest.items) {
      if (!(await context.artifacts.exists(item.gcs_uri))) return null;
    }
    return {
      artifacts: [],
      primaryUri: context.existingUri,
      ...manifestOutcome(manifest, context.existingUri),
    };
  }

  // -- inputs ----------------------------------------------------------------------------------

  private upstream(
    run: FlowRun,
    stepId: string,
    step: FlowStep,
  ): { ohlcvStepId: string; ohlcvGcsUri: string } {
    const ohlcvStepId = step.inputs['ohlcvStepId'];
    if (typeof ohlcvStepId !== 'string' || ohlcvStepId === '') {
      throw new StepInputError('inputs.ohlcvStepId must be a non-empty string', {
        field: 'ohlcvStepId',
      });
    }
    const upstream = run.steps[ohlcvStepId];
    if (upstream === undefined) {
      throw new StepInputError(`inputs.ohlcvStepId '${ohlcvStepId}' is not a step of this run`, {
        field: 'ohlcvStepId',
        ohlcvStepId,
      });
    }
    if (upstream.stepType !== 'OHLCV_EXPORT') {
      throw new StepInputError(
        `inputs.ohlcvStepId '${ohlcvStepId}' is a ${upstream.stepType} step, not OHLCV_EXPORT`,
        { field: 'ohlcvStepId', ohlcvStepId, stepType: upstream.stepType },
      );
    }
    if (!step.dependsOn.includes(ohlcvStepId)) {
      throw new StepInputError(
        `inputs.ohlcvStepId '${ohlcvStepId}' is not in dependsOn of ${stepId}`,
        {
          field: 'ohlcvStepId',
          ohlcvStepId,
        },
      );
    }
    if (upstream.status !== 'SUCCEEDED') {
      throw new StepInputError(
        `upstream step '${ohlcvStepId}' is ${upstream.status}, not SUCCEEDED`,
        {
          field: 'ohlcvStepId',
          ohlcvStepId,
          status: upstream.status,
        },
      );
    }
    if (
      step.timeframe !== undefined &&
      upstream.timeframe !== undefined &&
      step.timeframe !== upstream.timeframe
    ) {
      throw new StepInputError(
        `upstream step '${ohlcvStepId}' has timeframe ${upstream.timeframe}, this step ${step.timeframe}`,
        { field: 'ohlcvStepId', ohlcvStepId },
      );
    }
    const uri = upstream.outputs.gcs_uri;
    if (typeof uri !== 'string') {
      throw new StepInputError(`upstream step '${ohlcvStepId}' has no outputs.gcs_uri`, {
        field: 'ohlcvStepId',
        ohlcvStepId,
      });
    }
    try {
      parseGcsUri(uri);
    } catch {
      throw new StepInputError(`upstream step '${ohlcvStepId}' has an invalid outputs.gcs_uri`, {
        field: 'ohlcvStepId',
        ohlcvStepId,
      });
    }
    return { ohlcvStepId, ohlcvGcsUri: uri };
  }

  private requests(raw: unknown, chartTemplateId: string | undefined): ChartExportRequest[] {
    // seed 000: "requests[] (or simply chartTemplateId)".
    const list: unknown =
      raw === undefined && chartTemplateId !== undefined ? [{ chartTemplateId }] : raw;
    if (!Array.isArray(list) || list.length === 0) {
      throw new StepInputError(
        'inputs.requests must be a non-empty array (or give inputs.chartTemplateId)',
        {
          field: 'requests',
        },
      );
    }
    if (list.length > MAX_CHART_REQUESTS) {
      throw new StepInputError(
        `inputs.requests has ${list.length} entries; at most ${MAX_CHART_REQUESTS}`,
        {
          field: 'requests',
          max: MAX_CHART_REQUESTS,
        },
      );
    }
    const seen = new Set<string>();
    return list.map((entry: unknown, index) => {
      const field = `requests[${index}]`;
      if (!isRecord(entry))
        throw new StepInputError(`inputs.${field} must be an object`, { field });
      const extra = unknownKeys(entry, REQUEST_KEYS);
      if (extra.length > 0) {
        throw new StepInputError(`inputs.${field} has unknown fields: ${extra.join(', ')}`, {
          field,
          unknownFields: extra,
        });
      }
      const { chartTemplateId: id, kind, params } = entry;
      if (typeof id !== 'string') {
        throw new StepInputError(`inputs.${field}.chartTemplateId must be a string`, { field });
      }
      if (seen.has(id)) {
        throw new StepInputError(`inputs.${field}: chartTemplateId '${id}' is requested twice`, {
          field,
          chartTemplateId: id,
        });
      }
      seen.add(id);
      if (params !== undefined && !isRecord(params)) {
        throw new StepInputError(`inputs.${field}.params must be an object`, { field });
      }
      let chart: BoundChart;
      try {
        chart = this.renderer.bind({ chartTemplateId: id, params });
      } catch (error) {
        asInputError(error, field);
      }
      if (kind !== undefined && kind !== chart.kind) {
        throw new StepInputError(
          `inputs.${field}: template ${id} draws kind '${chart.kind}', not '${String(kind)}'`,
          { field, chartTemplateId: id, kind: chart.kind },
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

  // -- upstream artifact -----------------------------------------------------------------------

  private async readOhlcv(context: StepExecutionContext<ChartExportInputs>): Promise<OhlcvExport> {
    const { ohlcvGcsUri, ohlcvStepId } = context.inputs;
    let data: Buffer;
    try {
      data = await context.artifacts.read(ohlcvGcsUri);
    } catch (error) {
      if (error instanceof ArtifactNotFoundError) {
        throw new StepInputError(
          `OHLCV artifact of '${ohlcvStepId}' does not exist: ${ohlcvGcsUri}`,
          {
            ohlcvStepId,
            uri: ohlcvGcsUri,
          },
        );
      }
      throw error; // transient storage trouble: the harness decides (retry / nack)
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.toString('utf8'));
    } catch {
      throw new StepInputError(`OHLCV artifact ${ohlcvGcsUri} is not JSON`, { uri: ohlcvGcsUri });
    }
    const checked = validate.ohlcvExport(parsed);
    if (!checked.ok) {
      throw new StepInputError(
        `OHLCV artifact ${ohlcvGcsUri} violates ohlcv_export.schema.json: ${describeIssues(checked.issues)}`,
        { uri: ohlcvGcsUri, issues: checked.issues.slice(0, 5) },
      );
    }
    const ohlcv = checked.value;
    // The export belongs to the run that executed the OHLCV step: this run, or for a step a rerun
    // reused, the run it was reused from (outputs.execution.reusedFrom).
    const expectedRunId = producingRunId(context.run, ohlcvStepId);
    const problem = ohlcvProblem(ohlcv, expectedRunId, context.step.timeframe);
    if (problem !== undefined) {
      throw new StepInputError(`OHLCV artifact ${ohlcvGcsUri}: ${problem}`, { uri: ohlcvGcsUri });
    }
    return ohlcv;
  }
}

/** What the schema cannot say: ordering, counts, OHLC consistency, belonging to this run. */
function ohlcvProblem(
  ohlcv: OhlcvExport,
  runId: string,
  timeframe: string | undefined,
): string | undefined {
  if (ohlcv.runId !== runId) return `belongs to run ${ohlcv.runId}`;
  if (timeframe !== undefined && ohlcv.timeframe !== timeframe) {
    return `has timeframe ${ohlcv.timeframe}, this step ${timeframe}`;
  }
  if (ohlcv.candleCount !== ohlcv.candles.length) {
    return `candleCount ${ohlcv.candleCount} but ${ohlcv.candles.length} candles`;
  }
  let previous = Number.NEGATIVE_INFINITY;
  for (const [index, c] of ohlcv.candles.entries()) {
    const time = Date.parse(c.openTime);
    if (!(time > previous)) return `candles[${index}] is not after the previous candle`;
    previous = time;
    if (c.high < Math.max(c.open, c.close) || c.low > Math.min(c.open, c.close)) {
      return `candles[${index}] has high/low outside open/close`;
    }
  }
  return undefined;
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

function parseManifest(data: Buffer): ChartsManifest | null {
  try {
    const checked = validate.chartsManifest(JSON.parse(data.toString('utf8')));
    return checked.ok ? checked.value : null;
  } catch {
    return null;
  }
}
