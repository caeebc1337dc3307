#!/usr/bin/env node
// `tda` entry point: runs the TypeScript CLI through SWC (decorator-free, CommonJS output).
const { join } = require('node:path');
process.env.SWC_NODE_PROJECT ??= join(__dirname, '../../../tsconfig.runtime.json');
require('@swc-node/register');
require('../src/main.ts');
