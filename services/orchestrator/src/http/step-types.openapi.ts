import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import type { Json } from './openapi-parts';

/**
 * The per-step-type parts of the OpenAPI document, derived from the step type descriptors so that
 * a new step type is documented by registering it: which contract a step's `inputs` follow and
 * which contract its primary artifact (GET .../artifact) follows. `x-tda-contracts` is the same
 * map as data, for clients that pick a validator by stepType.
 */

const contractFile = (name: string): string => `contracts/${name}.schema.json`;

const ARTIFACTS = Object.fromEntries(
  STEP_TYPE_DESCRIPTORS.map((d) => [d.stepType, contractFile(d.artifact.contract)]),
);
const INPUTS = Object.fromEntries(
  STEP_TYPE_DESCRIPTORS.map((d) => [d.stepType, contractFile(d.inputsContract)]),
);

function byStepType(files: Record<string, string>): string {
  return Object.entries(files)
    .map(([stepType, file]) => `${file} (${stepType})`)
    .join(', ');
}

export const STEP_TYPE_OPENAPI_SCHEMAS: Readonly<Record<string, Json>> = {
  StepArtifact: {
    type: 'object',
    description: `A primary step artifact as stored, by step type: ${byStepType(ARTIFACTS)}.`,
    'x-tda-contracts': ARTIFACTS,
  },
  StepInputs: {
    type: 'object',
    description: `A step's inputs, by step type: ${byStepType(INPUTS)}. flow_run.schema.json selects the contract by stepType; a step whose inputs do not match fails with INVALID_STEP_INPUTS.`,
    'x-tda-contracts': INPUTS,
  },
};

/** "ohlcv_export, charts_manifest or llm_report_file": the artifact contracts in one phrase. */
export function artifactContractsPhrase(): string {
  const names = STEP_TYPE_DESCRIPTORS.map((d) => d.artifact.contract);
  return names.length <= 1
    ? names.join('')
    : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] ?? ''}`;
}
