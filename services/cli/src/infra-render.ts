import { dirname } from 'node:path';
import { checkDeployFiles, InfraError, writeDeployFiles } from '@tda/infra';
import { findDeployDir } from './infra-command';

export interface InfraRenderFlags {
  /** Compare only: fail (exit 1) when a generated file differs, write nothing. */
  check?: boolean;
}

/**
 * `tda infra render`: regenerates deploy/cloudrun/<profile>/*.yaml, skaffold.yaml and each
 * deployable service's Dockerfile and project.json from the deployment model (its workers from
 * the step type descriptors), deploy/environments.json and the pinned Node (checked in because
 * skaffold's rawYaml manifests cannot be templated). `--check` is the CI form.
 */
export function runInfraRender(
  flags: InfraRenderFlags,
  io: { print(lines: string[]): void; searchFrom: readonly string[] },
): void {
  const deployDir = findDeployDir(io.searchFrom);
  if (deployDir === undefined) {
    throw new InfraError(
      'cannot find deploy/environments.json above the CLI or the current directory',
    );
  }
  const repoRoot = dirname(deployDir);
  if (flags.check === true) {
    const diffs = checkDeployFiles(repoRoot);
    if (diffs.length > 0) {
      throw new InfraError(
        `generated deploy files are out of date (${diffs.map((d) => `${d.path}: ${d.problem}`).join(', ')}); run npx tda infra render`,
        { details: { diffs } },
      );
    }
    io.print(['deploy files are up to date']);
    return;
  }
  const result = writeDeployFiles(repoRoot);
  io.print([
    ...result.written.map((path) => `written   ${path}`),
    ...result.removed.map((path) => `removed   ${path}`),
    `${result.written.length} written, ${result.removed.length} removed, ${result.unchanged.length} unchanged` +
      (result.written.length + result.removed.length > 0
        ? " — commit deploy/cloudrun, skaffold.yaml and the services' Dockerfile/project.json"
        : ''),
  ]);
}
