import 'reflect-metadata';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { STEP_TYPES, STEP_TYPES_WITH_INPUTS } from '@tda/contracts';
import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import { describe, expect, it } from 'vitest';
import { LOCAL_WORKERS } from './local-workers';

const ROOT = resolve(__dirname, '../../..');

/** The worker services on disk: services/worker-* NX projects. */
function workerProjects(): string[] {
  return readdirSync(join(ROOT, 'services'))
    .filter((name) => name.startsWith('worker-'))
    .filter((name) => existsSync(join(ROOT, 'services', name, 'project.json')))
    .sort();
}

describe('step types, descriptors and workers agree (one definition per step type)', () => {
  it('every worker service has a descriptor, and every descriptor a worker service', () => {
    const described = STEP_TYPE_DESCRIPTORS.map((d) => d.service).sort();
    expect(workerProjects()).toEqual(described);
    for (const descriptor of STEP_TYPE_DESCRIPTORS) {
      expect(STEP_TYPES).toContain(descriptor.stepType);
    }
    expect(new Set(STEP_TYPE_DESCRIPTORS.map((d) => d.stepType)).size).toBe(
      STEP_TYPE_DESCRIPTORS.length,
    );
  });

  it('a step type has an inputs contract exactly when it has a descriptor, named after it', () => {
    expect(STEP_TYPE_DESCRIPTORS.map((d) => d.stepType)).toEqual([...STEP_TYPES_WITH_INPUTS]);
    for (const descriptor of STEP_TYPE_DESCRIPTORS) {
      expect(descriptor.inputsContract).toBe(`${descriptor.stepType.toLowerCase()}_inputs`);
      // worker-<step-type>, or its leading words when tda-worker-<step-type> would be longer than
      // a GCP service account id (30 characters): INDICATORS_ON_DEMAND → worker-indicators.
      const full = `worker-${descriptor.stepType.toLowerCase().replaceAll('_', '-')}`;
      if (`tda-${full}`.length <= 30) expect(descriptor.service).toBe(full);
      else expect(`${full}-`.startsWith(`${descriptor.service}-`), descriptor.service).toBe(true);
    }
  });

  it("each worker's main runs its own definition, the one npm start composes", () => {
    expect(LOCAL_WORKERS.map((w) => w.descriptor)).toEqual([...STEP_TYPE_DESCRIPTORS]);
    for (const { descriptor } of LOCAL_WORKERS) {
      const main = readFileSync(join(ROOT, 'services', descriptor.service, 'src/main.ts'), 'utf8');
      expect(main, descriptor.service).toMatch(/void runWorker\(\w+Worker\);/);
    }
  });
});
