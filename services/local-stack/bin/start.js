#!/usr/bin/env node
// `npm start`: runs the TypeScript launcher through SWC (decorator metadata, path aliases).
const { join } = require('node:path');
process.env.SWC_NODE_PROJECT ??= join(__dirname, '../../../tsconfig.runtime.json');
require('@swc-node/register');
require('../src/main.ts');
