import { ChartRenderer, DEFAULT_MAX_CHART_IMAGE_BYTES } from '@tda/charts';
import { ChartExportHandler } from './chart-export.handler';

export interface ChartExportHandlerSettings {
  /** Defaults to seed 002's 256 KB. */
  maxChartImageBytes?: number;
  /** Font files for resvg; defaults to the bundled DejaVu Sans (tests and odd packagings only). */
  fontFiles?: readonly string[];
}

/**
 * The handler with the default templates and the bundled font. Constructing it resolves the font
 * files, so a broken package fails at boot rather than on the first chart.
 */
export function createChartExportHandler(
  settings: ChartExportHandlerSettings = {},
): ChartExportHandler {
  return new ChartExportHandler({
    renderer: new ChartRenderer({
      maxImageBytes: settings.maxChartImageBytes ?? DEFAULT_MAX_CHART_IMAGE_BYTES,
      ...(settings.fontFiles === undefined ? {} : { fontFiles: settings.fontFiles }),
    }),
  });
}
