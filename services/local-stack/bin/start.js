#!/usr/bin/env node
// `npm start`: runs the TypeScript launcher through SWC (decorator metadata, path aliases).
const { join } = require('node:path');
process.env.SWC_NODE_PROJECT ??= join(__dirname, '../../../tsconfig.runtime.json');
// Google's auth library probes for the GCE metadata server and warns when it is absent, which
// is always the case on a developer machine; keep the terminal for the progress display.
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'MetadataLookupWarning') {
    process.stderr.write(`${warning.name}: ${warning.message}\n`);
  }
});
require('@swc-node/register');
require('../src/main.ts');
