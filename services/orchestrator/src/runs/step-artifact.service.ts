import { Inject, Injectable } from '@nestjs/common';
import {
  ArtifactNotFoundError,
  ArtifactStoreError,
  parseGcsUri,
  sha256Hex,
  type ArtifactStore,
} from '@tda/artifacts';
import type { StepType } from '@tda/contracts';
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
    const fail = (reason: ArtifactUnavailableReason, message: string, extra = {}): never => {
      throw new ArtifactUnavailableError(message, reason, { runId, stepId, uri, ...extra });
    };

    let bucket: string;
    try {
      bucket = parseGcsUri(uri).bucket;
    } catch {
      return fail('invalid_uri', `step '${stepId}' records an artifact uri that is not gs://...`);
    }
    const expected = this.config.TDA_ARTIFACTS_BUCKET;
    if (bucket !== expected) {
      return fail(
        'foreign_bucket',
        `artifact ${uri} is outside this deployment's artifacts bucket '${expected}'`,
        { bucket: expected },
      );
    }

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
        { runId, stepId, uri, error: describeError(error) },
        'artifact read failed',
      );
      if (error instanceof ArtifactNotFoundError) {
        return fail('missing', `artifact ${uri} is recorded by the step but missing in storage`);
      }
      return fail('read_failed', `artifact ${uri} could not be read from storage; retry later`, {
        storageCode: error.code,
      });
    }
    if (bytes.length > MAX_ARTIFACT_RESPONSE_BYTES) {
      return fail(
        'too_large',
        `artifact ${uri} is ${bytes.length} bytes, over the API limit of ${MAX_ARTIFACT_RESPONSE_BYTES} bytes; read it from storage directly`,
        { bytes: bytes.length, limitBytes: MAX_ARTIFACT_RESPONSE_BYTES },
      );
    }
    try {
      JSON.parse(bytes.toString('utf8'));
    } catch {
      return fail('not_json', `artifact ${uri} is not JSON`, { bytes: bytes.length });
    }
    return { runId, stepId, stepType: step.stepType, uri, bytes, sha256: sha256Hex(bytes) };
  }
}
