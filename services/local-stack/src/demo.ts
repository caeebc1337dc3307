import { join } from 'node:path';
import { parseGcsUri, type ArtifactStore } from '@tda/artifacts';
import { validate, type FlowRun } from '@tda/contracts';
import { ApiClient, watchRun } from '@tda/service-cli';

export interface DemoOptions {
  url: string;
  token: string;
  flowKey: string;
  symbol: string;
  dataDir: string;
  artifacts: ArtifactStore;
  out: { write(text: string): boolean; isTTY?: boolean };
  signal?: AbortSignal;
}

/** Where the local adapters keep gs://bucket/path (LocalArtifactStore layout). */
export function localPath(dataDir: string, uri: string): string {
  const { bucket, path } = parseGcsUri(uri);
  return join(dataDir, bucket, path);
}

/** Every artifact of a finished run, including the PNGs listed in chart manifests. */
export async function runArtifacts(
  run: FlowRun,
  artifacts: ArtifactStore,
): Promise<{ stepId: string; uri: string; kind: string }[]> {
  const list: { stepId: string; uri: string; kind: string }[] = [];
  for (const stepId of Object.keys(run.steps).sort()) {
    const step = run.steps[stepId];
    const uri = step?.outputs.gcs_uri;
    if (step === undefined || uri === undefined) continue;
    list.push({
      stepId,
      uri,
      kind: step.stepType === 'CHART_EXPORT' ? 'charts manifest' : step.stepType,
    });
    if (step.stepType !== 'CHART_EXPORT') continue;
    const manifest = validate.chartsManifest(
      JSON.parse((await artifacts.read(uri)).toString('utf8')),
    );
    if (!manifest.ok) continue;
    for (const item of manifest.value.items)
      list.push({ stepId, uri: item.gcs_uri, kind: `PNG ${item.kind}` });
  }
  return list;
}

/** Triggers the demo run, draws its progress until it finishes and prints where the files are. */
export async function runDemo(options: DemoOptions): Promise<FlowRun> {
  const client = new ApiClient({ baseUrl: options.url, token: options.token });
  const { run } = await client.trigger({
    flowKey: options.flowKey,
    scope: { symbol: options.symbol },
    trigger: { type: 'DEBUG_HTTP', source: 'npm start demo' },
  });
  options.out.write(`\ndemo run ${run.runId} (${options.flowKey}, ${options.symbol})\n`);
  const final = await watchRun(client, run.runId, {
    out: options.out,
    intervalMs: 300,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const files = await runArtifacts(final, options.artifacts);
  if (files.length > 0) {
    options.out.write('\nartifacts (gs:// URI -> local file):\n');
    for (const file of files) {
      options.out.write(
        `  ${file.kind.padEnd(16)} ${file.uri}\n    ${localPath(options.dataDir, file.uri)}\n`,
      );
    }
  }
  return final;
}
