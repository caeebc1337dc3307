import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** contracts/ at the repository root: the schemas and their examples. */
export const CONTRACTS_DIR = fileURLToPath(new URL('../../../../contracts/', import.meta.url));
export const EXAMPLES_DIR = `${CONTRACTS_DIR}examples/`;

/** Schemas that only hold shared $defs (no document of their own, so no example). */
const DEFS_ONLY = new Set(['common']);

/** Contract names (schema file names without .schema.json), defs-only schemas excluded. */
export function contractSchemaNames(): string[] {
  return readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => f.replace(/\.schema\.json$/, ''))
    .filter((name) => !DEFS_ONLY.has(name))
    .sort();
}

export function readSchema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(`${CONTRACTS_DIR}${name}.schema.json`, 'utf8')) as Record<
    string,
    unknown
  >;
}

/** Every file in contracts/examples (whatever its name, so that a misnamed file is noticed). */
export function exampleFileNames(): string[] {
  return readdirSync(EXAMPLES_DIR).sort();
}

/** The contract an example belongs to: its file name up to the first dot. */
export function contractOfExample(file: string): string {
  return file.split('.')[0] ?? '';
}

/** A fresh, mutable copy of an example document. */
export function loadExample(file: string): unknown {
  return JSON.parse(readFileSync(`${EXAMPLES_DIR}${file}`, 'utf8'));
}

/** snake_case contract name -> the key of the `validate` map (flow_run -> flowRun). */
export function validatorKey(contract: string): string {
  return contract.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
