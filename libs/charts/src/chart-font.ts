import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ChartFontError } from './charts.errors';

/**
 * Charts are rendered with a font shipped in node_modules (dejavu-fonts-ttf), never with system
 * fonts: a slim container has none, and a laptop has different ones, so the same candles would give
 * different PNG bytes. ECharts lays text out with this family name and resvg draws it from these
 * files only.
 */
export const CHART_FONT_FAMILY = 'DejaVu Sans';

const FONT_FILE_NAMES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'] as const;

/**
 * Absolute paths of the bundled font files, resolved like a module import (so it works from the
 * repository, from an installed production node_modules, under vitest and under CommonJS).
 */
export function bundledFontFiles(): string[] {
  // Resolved from this file, not from process.cwd(), so a service started elsewhere still finds it.
  const resolver = createRequire(import.meta.url);
  return FONT_FILE_NAMES.map((name) => {
    const id = `dejavu-fonts-ttf/ttf/${name}`;
    try {
      return resolver.resolve(id);
    } catch (error) {
      throw new ChartFontError(
        `bundled chart font ${id} not found (is dejavu-fonts-ttf installed?)`,
        error,
      );
    }
  });
}

/** Checks caller-supplied font files up front: a missing font must fail at boot, not per chart. */
export function checkFontFiles(files: readonly string[]): string[] {
  if (files.length === 0) throw new ChartFontError('no chart font files given');
  for (const file of files) {
    if (!existsSync(file)) throw new ChartFontError(`chart font file not found: ${file}`);
  }
  return [...files];
}
