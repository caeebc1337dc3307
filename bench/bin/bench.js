#!/usr/bin/env node
// `npm run bench [-- <part>...] [--smoke]`: runs the TypeScript benches through SWC, like npm start.
const { join } = require('node:path');
process.env.SWC_NODE_PROJECT ??= join(__dirname, '../../tsconfig.runtime.json');
require('@swc-node/register');
require('../main.ts')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });
