import type { ErrorCode } from '@tda/contracts';

/**
 * Errors of the charts library. Each carries the ErrorCode a caller should report: bad template ids
 * or params are the step's input problem (INVALID_STEP_INPUTS); a chart that cannot be rendered or
 * stays over the size limit is ours (INTERNAL_ERROR: rendering is deterministic, a retry would give
 * the same result).
 */
export class ChartError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChartError';
  }
}

export class UnknownChartTemplateError extends ChartError {
  constructor(chartTemplateId: string, available: readonly string[]) {
    super(
      'INVALID_STEP_INPUTS',
      `unknown chartTemplateId '${chartTemplateId}'; available: ${available.join(', ')}`,
      { chartTemplateId, available: [...available] },
    );
    this.name = 'UnknownChartTemplateError';
  }
}

export class ChartParamsError extends ChartError {
  constructor(chartTemplateId: string, problems: readonly string[]) {
    super('INVALID_STEP_INPUTS', `invalid params for ${chartTemplateId}: ${problems.join('; ')}`, {
      chartTemplateId,
      problems: [...problems],
    });
    this.name = 'ChartParamsError';
  }
}

export class ChartTooLargeError extends ChartError {
  constructor(chartTemplateId: string, smallestBytes: number, maxBytes: number) {
    super(
      'INTERNAL_ERROR',
      `${chartTemplateId}: smallest rendering is ${smallestBytes} bytes, over the ${maxBytes}-byte image limit`,
      { chartTemplateId, smallestBytes, maxBytes },
    );
    this.name = 'ChartTooLargeError';
  }
}

export class ChartRenderError extends ChartError {
  constructor(chartTemplateId: string, reason: string, cause?: unknown) {
    super(
      'INTERNAL_ERROR',
      `${chartTemplateId}: rendering failed: ${reason}`,
      { chartTemplateId },
      {
        cause,
      },
    );
    this.name = 'ChartRenderError';
  }
}

/** The bundled font files cannot be found: a packaging problem, reported at construction. */
export class ChartFontError extends ChartError {
  constructor(message: string, cause?: unknown) {
    super('INTERNAL_ERROR', message, undefined, { cause });
    this.name = 'ChartFontError';
  }
}
