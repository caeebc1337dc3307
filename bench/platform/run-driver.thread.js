// The bench driver's thread entry: loads the TypeScript driver through SWC, like bench/bin.
const { join } = require('node:path');
process.env.SWC_NODE_PROJECT ??= join(__dirname, '../../tsconfig.runtime.json');
require('@swc-node/register');
require('./run-driver.thread.ts');
