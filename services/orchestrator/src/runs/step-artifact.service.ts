import { Inject, Injectable } from '@nestjs/common';
import {
  ArtifactNotFoundError,
  ArtifactStoreError,
  parseGcsUri,
  sha256Hex,
  type ArtifactStore,
} from '@tda/artifacts';
import { TdaError, type StepType } from '@tda/contracts';
import { StepNotFoundError, stepOf } from '@tda/flow-engine';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import {
  ArtifactNotAvailableError,
  ArtifactUnavailableError,
  type ArtifactUnavailableReason,
} from '../orchestrator.errors';
import { ARTIFACT_STORE, LOGGER, ORCHESTRATOR_CONFIG } from '../orchestrator.tokens';
import { assertStepIdParam } from './path-ids';
import { RunsService } from './runs.service';

/**
 * The largest artifact the API returns. Primary artifacts are JSON of at most a few hundred KB
 * (an OHLCV export, a charts manifest, an LLM report); anything bigger is refused rather than
 * buffered into a response — read such objects from storage directly.
 */
export const MAX_ARTIFACT_RESPONSE_BYTES = 1024 * 1024;

/** Bundle files (chart PNGs are at most 256 KB each, TDA_MAX_CHART_IMAGE_BYTES). */
export const MAX_FILE_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The bundle files the API serves, by extension. */
const FILE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
};
const SAFE_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,250}$/;

function extensionOf(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1).toLowerCase();
}

/** A bundle file the step does not have (or a name that is not one of its files). */
export class ArtifactFileNotFoundError extends TdaError {
  constructor(runId: string, stepId: string, fileName: string) {
    super('NOT_FOUND', `step '${stepId}' of run '${runId}' has no file '${fileName}'`, {
      details: { runId, stepId, fileName },
    });
  }
}

export interface StepArtifact {
  runId: string;
  stepId: string;
  stepType: StepType;
  uri: string;
  /** The object's exact bytes (valid JSON), served as they are stored. */
  bytes: Buffer;
  sha256: string;
}

/**
 * Read-only access to a step's primary artifact (`steps.<id>.outputs.gcs_uri`) through the
 * ArtifactStore port, for GET /runs/{runId}/steps/{stepId}/artifact. Only objects in this
 * deployment's artifacts bucket are served: the URI comes from a stored document, and the API
 * must not become a reader of any bucket its identity happens to reach.
 */
@Injectable()
export class StepArtifactService {
  constructor(
    private readonly runs: RunsService,
    @Inject(ARTIFACT_STORE) private readonly artifacts: Pick<ArtifactStore, 'read'>,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_ARTIFACTS_BUCKET'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async read(runId: string, stepId: string, ownerId: string): Promise<StepArtifact> {
    const { stepType, uri } = await this.primaryUri(runId, stepId, ownerId);
    const bytes = await this.readChecked(uri, { runId, stepId }, MAX_ARTIFACT_RESPONSE_BYTES);
    try {
      JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new ArtifactUnavailableError(`artifact ${uri} is not JSON`, 'not_json', {
        runId,
        stepId,
        uri,
        bytes: bytes.length,
      });
    }
    return { runId, stepId, stepType, uri, bytes, sha256: sha256Hex(bytes) };
  }

  /**
   * One file of the step's bundle, beside its primary artifact and named after the step
   * (`<stepId>.<…>`: chart PNGs, the OHLCV CSV): GET /runs/{runId}/steps/{stepId}/files/{name}.
   * Any other name is a 404, so the route reads nothing but this step's own files.
   */
  async readFile(
    runId: string,
    stepId: string,
    fileName: string,
    ownerId: string,
  ): Promise<StepArtifact & { contentType: string }> {
    const contentType = FILE_TYPES[extensionOf(fileName)];
    const { stepType, uri } = await this.primaryUri(runId, stepId, ownerId);
    if (!SAFE_FILE_NAME.test(fileName) || !fileName.startsWith(`${stepId}.`) || !contentType) {
      throw new ArtifactFileNotFoundError(runId, stepId, fileName.slice(0, 200));
    }
    const fileUri = `${uri.slice(0, uri.lastIndexOf('/') + 1)}${fileName}`;
    const ctx = { runId, stepId };
    const bytes = await this.readChecked(fileUri, ctx, MAX_FILE_RESPONSE_BYTES).catch(
      (error: unknown) => {
        if (error instanceof ArtifactUnavailableError && error.reason === 'missing') {
          throw new ArtifactFileNotFoundError(runId, stepId, fileName);
        }
        throw error;
      },
    );
    return { runId, stepId, stepType, uri: fileUri, bytes, sha256: sha256Hex(bytes), contentType };
  }

  /** The step's primary artifact URI, checked to be in this deployment's bucket. */
  private async primaryUri(
    runId: string,
    stepId: string,
    ownerId: string,
  ): Promise<{ stepType: StepType; uri: string }> {
    assertStepIdParam(stepId);
    const run = await this.runs.get(runId, ownerId);
    const step = stepOf(run, stepId);
    if (step === undefined) throw new StepNotFoundError(runId, stepId);
    const uri = step.outputs.gcs_uri;
    if (uri === undefined) {
      throw new ArtifactNotAvailableError(
        `step '${stepId}' of run '${runId}' has no artifact (status ${step.status}); a step records its artifact when it SUCCEEDED`,
        { runId, stepId, status: step.status },
      );
    }
    let bucket: string;
    try {
      bucket = parseGcsUri(uri).bucket;
    } catch {
      throw new ArtifactUnavailableError(
        `step '${stepId}' records an artifact uri that is not gs://...`,
        'invalid_uri',
        { runId, stepId, uri },
      );
    }
    const expected = this.config.TDA_ARTIFACTS_BUCKET;
    if (bucket !== expected) {
      throw new ArtifactUnavailableError(
        `artifact ${uri} is outside this deployment's artifacts bucket '${expected}'`,
        'foreign_bucket',
        { runId, stepId, uri, bucket: expected },
      );
    }
    return { stepType: step.stepType, uri };
  }

  /** The object's bytes, with storage failures and the size limit as ArtifactUnavailableError. */
  private async readChecked(
    uri: string,
    ctx: { runId: string; stepId: string },
    limitBytes: number,
  ): Promise<Buffer> {
    const fail = (reason: ArtifactUnavailableReason, message: string, extra = {}): never => {
      throw new ArtifactUnavailableError(message, reason, { ...ctx, uri, ...extra });
    };
    let bytes: Buffer;
    try {
      bytes = await this.artifacts.read(uri);
    } catch (error) {
      if (!(error instanceof ArtifactStoreError)) throw error;
      // The storage error itself stays in the logs: its reason may name backend internals.
      logEvent(
        this.logger,
        'warn',
        'http_request_failed',
        { ...ctx, uri, error: describeError(error) },
        'artifact read failed',
      );
      if (error instanceof ArtifactNotFoundError) {
        return fail('missing', `artifact ${uri} is recorded by the step but missing in storage`);
      }
      return fail('read_failed', `artifact ${uri} could not be read from storage; retry later`, {
        storageCode: error.code,
      });
    }
    if (bytes.length > limitBytes) {
      return fail(
        'too_large',
        `artifact ${uri} is ${bytes.length} bytes, over the API limit of ${limitBytes} bytes; read it from storage directly`,
        { bytes: bytes.length, limitBytes },
      );
    }
    return bytes;
  }
}
