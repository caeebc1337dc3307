import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import type { FlowRun, RunStatusSummary } from '@tda/contracts';
import { runStatusSummary, type BlockedOnExplanation } from '@tda/flow-engine';
import type { RunListPage } from '@tda/flow-store';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { RunTrigger } from '../runs/run-trigger.service';
import { RunsService } from '../runs/runs.service';
import { StepArtifactService } from '../runs/step-artifact.service';
import { ifNoneMatchHits, jsonEtag } from './etag';
import { headerValue, type HttpRequest, type HttpResponse } from './http-types';

export { OWNER_HEADER } from '../auth/acting-owner';
/** Response headers of GET /runs/{runId}/steps/{stepId}/artifact. */
export const ARTIFACT_URI_HEADER = 'X-TDA-Artifact-Uri';
export const ARTIFACT_SHA256_HEADER = 'X-TDA-Artifact-Sha256';

/** The API over flow runs (README): the acting owner's runs only; another owner's are 404. */
@Controller('runs')
@Access('user')
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly runTrigger: RunTrigger,
    private readonly stepArtifacts: StepArtifactService,
  ) {}

  /** 201 + Location for a new run; 200 with the existing run for a repeated idempotencyKey. */
  @Post()
  async trigger(
    @Body() body: unknown,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<FlowRun> {
    const { run, created } = await this.runTrigger.trigger(body, owner);
    response.status(created ? 201 : 200);
    response.setHeader('Location', `/runs/${encodeURIComponent(run.runId)}`);
    return run;
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<RunListPage> {
    return this.runs.list(query, owner);
  }

  @Get(':runId')
  get(@Param('runId') runId: string, @Owner() owner: string): Promise<FlowRun> {
    return this.runs.get(runId, owner);
  }

  /**
   * seed 004 status of a run, for pollers: an ETag of the body, and `If-None-Match` with it
   * answers 304 without a body (a 5-second poller of an unchanged run costs no transfer).
   */
  @Get(':runId/status')
  async status(
    @Param('runId') runId: string,
    @Owner() owner: string,
    @Req() request: HttpRequest,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<RunStatusSummary | undefined> {
    const summary = runStatusSummary(await this.runs.get(runId, owner));
    const etag = jsonEtag(summary);
    response.setHeader('ETag', etag);
    response.setHeader('Cache-Control', 'no-cache');
    if (!ifNoneMatchHits(headerValue(request, 'If-None-Match'), etag)) return summary;
    response.status(304);
    return undefined;
  }

  /** 200 with the run (CANCELLED, or already CANCELLED); 409 if it already SUCCEEDED/FAILED. */
  @Post(':runId/cancel')
  @HttpCode(200)
  cancel(@Param('runId') runId: string, @Owner() owner: string): Promise<FlowRun> {
    return this.runs.cancel(runId, owner);
  }

  @Get(':runId/steps/:stepId/blocked-on')
  blockedOn(
    @Param('runId') runId: string,
    @Param('stepId') stepId: string,
    @Owner() owner: string,
  ): Promise<BlockedOnExplanation> {
    return this.runs.blockedOn(runId, stepId, owner);
  }

  /**
   * The step's primary artifact, byte for byte as stored (so its sha256 matches
   * outputs.execution.artifact.sha256), with its URI and hash in headers. 409 while the step has
   * none; 502 when storage cannot serve it (README "Artifacts").
   */
  @Get(':runId/steps/:stepId/artifact')
  async artifact(
    @Param('runId') runId: string,
    @Param('stepId') stepId: string,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<StreamableFile> {
    const artifact = await this.stepArtifacts.read(runId, stepId, owner);
    // Our names are printable ASCII; anything else would make setHeader throw, so it is omitted.
    if (/^[\x20-\x7e]+$/.test(artifact.uri)) response.setHeader(ARTIFACT_URI_HEADER, artifact.uri);
    response.setHeader(ARTIFACT_SHA256_HEADER, artifact.sha256);
    return new StreamableFile(artifact.bytes, {
      type: 'application/json; charset=utf-8',
      length: artifact.bytes.length,
    });
  }

  /**
   * One file of the step's bundle (chart PNGs named in the charts manifest, the OHLCV CSV), as
   * stored, with its content type; 404 for a name that is not one of the step's files.
   */
  @Get(':runId/steps/:stepId/files/:fileName')
  async file(
    @Param('runId') runId: string,
    @Param('stepId') stepId: string,
    @Param('fileName') fileName: string,
    @Owner() owner: string,
    @Res({ passthrough: true }) response: HttpResponse,
  ): Promise<StreamableFile> {
    const file = await this.stepArtifacts.readFile(runId, stepId, fileName, owner);
    response.setHeader(ARTIFACT_SHA256_HEADER, file.sha256);
    response.setHeader('Cache-Control', 'private, max-age=3600');
    return new StreamableFile(file.bytes, { type: file.contentType, length: file.bytes.length });
  }
}
