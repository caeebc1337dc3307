#!/usr/bin/env node
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generate, ROOT } from './generate-lib.mjs';

const files = await generate();
for (const [path, content] of Object.entries(files)) {
  mkdirSync(dirname(join(ROOT, path)), { recursive: true });
  writeFileSync(join(ROOT, path), content);
  process.stdout.write(`wrote ${path}\n`);
}
