import { join } from 'node:path';

/**
 * The bundled datasets (libs/market-data/data), located relative to this module so that it works
 * from the sources under both Vitest and @swc-node/register (CommonJS `__dirname`). A build that
 * moves the code elsewhere passes `dataDir` to BundledCandleSource instead.
 */
export const DEFAULT_BUNDLED_DATA_DIR = join(__dirname, '..', 'data');
