import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deploymentKindTable, deploymentRolesTable, deploymentSizingTable } from '@tda/infra';
import { stepPolicyTable, type DocTable } from '@tda/step-types';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/**
 * README blocks generated from code: `<!-- generated:NAME -->` … `<!-- /generated:NAME -->`.
 * A difference fails with the expected block; TDA_WRITE_DOCS=1 rewrites the README instead
 * (then `git diff` shows what changed).
 */
const BLOCKS: ReadonlyArray<{ file: string; name: string; render: () => DocTable }> = [
  { file: 'README.md', name: 'step-policies', render: () => stepPolicyTable() },
  { file: 'deploy/README.md', name: 'deploy-kinds', render: () => deploymentKindTable() },
  { file: 'deploy/README.md', name: 'deploy-sizing', render: () => deploymentSizingTable() },
  { file: 'deploy/README.md', name: 'deploy-roles', render: () => deploymentRolesTable() },
];

const WRITE = process.env['TDA_WRITE_DOCS'] === '1';

/** A Markdown table; prettier pads the columns afterwards. */
function markdown({ head, rows }: DocTable): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function blockPattern(name: string): RegExp {
  return new RegExp(`(<!-- generated:${name} -->\\n)([\\s\\S]*?)(<!-- /generated:${name} -->)`);
}

describe('generated README blocks', () => {
  it.each(BLOCKS)('$file $name is rendered from code', async ({ file, name, render }) => {
    const path = join(root, file);
    const text = readFileSync(path, 'utf8');
    const match = blockPattern(name).exec(text);
    expect(match, `${file} has no <!-- generated:${name} --> block`).not.toBeNull();
    const options = (await prettier.resolveConfig(path)) ?? {};
    // Blank lines around the table: how prettier leaves a table between two HTML comments.
    const expected = `\n${await prettier.format(markdown(render()), { ...options, parser: 'markdown' })}\n`;
    if (WRITE && match?.[2] !== expected) {
      writeFileSync(path, text.replace(blockPattern(name), `$1${expected}$3`));
      return;
    }
    expect(match?.[2], `${file} block ${name} is stale (TDA_WRITE_DOCS=1 rewrites it)`).toBe(
      expected,
    );
  });
});
