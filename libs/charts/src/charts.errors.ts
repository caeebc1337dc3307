import { TdaError } from '@tda/contracts';

/**
 * Errors of the charts library (TdaError). Bad template ids or params are the step's input
 * problem (INVALID_STEP_INPUTS); a chart that cannot be rendered or stays over the size limit is
 * ours (INTERNAL_ERROR: rendering is deterministic, a retry would give the same result).
 */
export class ChartError extends TdaError {}

export class UnknownChartTemplateError extends ChartError {
  constructor(chartTemplateId: string, available: readonly string[]) {
    super(
      'INVALID_STEP_INPUTS',
      `unknown chartTemplateId '${chartTemplateId}'; available: ${available.join(', ')}`,
      { details: { chartTemplateId, available: [...available] } },
    );
  }
}

export class ChartParamsError extends ChartError {
  constructor(chartTemplateId: string, problems: readonly string[]) {
    super('INVALID_STEP_INPUTS', `invalid params for ${chartTemplateId}: ${problems.join('; ')}`, {
      details: { chartTemplateId, problems: [...problems] },
    });
  }
}

export class ChartTooLargeError extends ChartError {
  constructor(chartTemplateId: string, smallestBytes: number, maxBytes: number) {
    super(
      'INTERNAL_ERROR',
      `${chartTemplateId}: smallest rendering is ${smallestBytes} bytes, over the ${maxBytes}-byte image limit`,
      { details: { chartTemplateId, smallestBytes, maxBytes } },
    );
  }
}

export class ChartRenderError extends ChartError {
  constructor(chartTemplateId: string, reason: string, cause?: unknown) {
    super('INTERNAL_ERROR', `${chartTemplateId}: rendering failed: ${reason}`, {
      details: { chartTemplateId },
      cause,
    });
  }
}

/** The bundled font files cannot be found: a packaging problem, reported at construction. */
export class ChartFontError extends ChartError {
  constructor(message: string, cause?: unknown) {
    super('INTERNAL_ERROR', message, { cause });
  }
}
