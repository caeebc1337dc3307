import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Name of the directory the production build (tools/build) copies libs/market-data/data to,
 * beside the service bundle (dist/services/<project>/market-data, /app/market-data in the image).
 */
export const BUNDLE_DATA_DIR_NAME = 'market-data';

/**
 * Where the bundled datasets are for code living in `moduleDir`: beside a production bundle
 * (`<bundle dir>/market-data`, where `__dirname` is the bundle's directory), else the sources
 * layout (`libs/market-data/src/../data`, Vitest and @swc-node/register).
 */
export function resolveBundledDataDir(moduleDir: string): string {
  const besideBundle = join(moduleDir, BUNDLE_DATA_DIR_NAME);
  return existsSync(besideBundle) ? besideBundle : join(moduleDir, '..', 'data');
}

/**
 * The bundled datasets (libs/market-data/data), located relative to this module (CommonJS
 * `__dirname`: the sources directory, or the bundle's directory after the build). TDA_MARKET_DATA_DIR
 * (BundledCandleSource `dataDir`) overrides it.
 */
export const DEFAULT_BUNDLED_DATA_DIR = resolveBundledDataDir(__dirname);
