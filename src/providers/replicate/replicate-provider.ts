/**
 * VideoProvider and ImageProvider for Replicate's predictions API.
 *
 * Wire protocol (JSON, `Authorization: Bearer <token>`):
 *   create  POST {baseUrl}/v1/models/{owner}/{name}/predictions   { input }            (owner/name)
 *           POST {baseUrl}/v1/predictions                          { version, input }   (owner/name:version)
 *           → 201 prediction; with `Prefer: wait=N` held until it ends or N seconds pass
 *   get     GET  {baseUrl}/v1/predictions/{id}         → prediction
 *   cancel  POST {baseUrl}/v1/predictions/{id}/cancel  → prediction (a finished one unchanged)
 * A prediction is { id, status: starting | processing | succeeded | failed | canceled, output,
 * error, logs }; its output files are downloaded through fetchMedia.
 *
 * Images wait for their prediction within one call (generate-images.ts). Videos are polled by
 * the job runner, statelessly: the prediction id is all a restarted gateway needs.
 *
 * What a video failure means (as for the fal adapter):
 * - submit fails → throws: errorForStatus for an answer, asUpstreamError for none, so the
 *   failover rules can tell a refusal (never accepted) from a lost answer (perhaps accepted).
 * - poll cannot get an answer (network, timeout, 5xx, 429, no prediction in the body) →
 *   `processing`; the job's deadline ends a job that never recovers.
 * - a definite end → `failed` with a short reason of ours, never the upstream's words.
 */
import type { MediaUpstreamOptions } from '../shared/upstream-connection';
import { upstreamError } from '../../domain/errors/domain-error';
import { asUpstreamError, errorForStatus } from '../shared/upstream-errors';
import type { SubmittedJob } from '../../domain/video/video-port';
import type { GeneratedImage, GeneratedImages, ImageGenerationRequest, ImageProvider, VideoJobSpec, VideoPollResult, VideoProvider } from '../ports';
import { videoFailureReason } from './failure-reason';
import { generateImages, type ImageSettings } from './generate-images';
import { createCall, videoInput } from './prediction-input';
import { downloadOutput, outputUrls, progressFromLogs } from './prediction-output';
import { predictionPath, ReplicateHttp } from './replicate-http';

export interface ReplicateOptions extends MediaUpstreamOptions {
  /** Deadline of a whole image generation, and of each single call of a video job. */
  timeoutMs: number;
  /** Sync-mode wait of an image create, 1..60 s (default 60), kept under timeoutMs. */
  waitSeconds?: number;
  /** Pause between polls of an image prediction that outlasted the wait (default 1000 ms). */
  pollIntervalMs?: number;
}

const PROCESSING: VideoPollResult = { state: 'processing' };

export class ReplicateProvider implements VideoProvider, ImageProvider {
  /** A repeated create is a second prediction, run and billed again. */
  readonly submitIsRepeatable = false;
  private readonly http: ReplicateHttp;
  private readonly timeoutMs: number;
  private readonly fetchMedia: ReplicateOptions['fetchMedia'];
  private readonly images: ImageSettings;

  constructor(options: ReplicateOptions) {
    this.http = new ReplicateHttp(options.baseUrl, options.apiKey, options.dispatcher, options.propagate);
    this.timeoutMs = options.timeoutMs;
    this.fetchMedia = options.fetchMedia;
    const secrets = [options.baseUrl.replace(/\/+$/, ''), new URL(options.baseUrl).host];
    if (options.apiKey) secrets.push(options.apiKey);
    this.images = {
      timeoutMs: options.timeoutMs,
      // At least a second of the timeout is left after the wait, to read the answer and, if
      // the prediction still runs, to poll or cancel it.
      waitSeconds: Math.max(0, Math.min(60, Math.floor(options.waitSeconds ?? 60), Math.floor(options.timeoutMs / 1000) - 1)),
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      fetchMedia: options.fetchMedia,
      secrets,
    };
  }

  generate(request: ImageGenerationRequest): Promise<GeneratedImages> {
    return generateImages(this.http, request, this.images);
  }

  async submit(spec: VideoJobSpec): Promise<{ queueId: string }> {
    const { path, body } = createCall(spec.upstreamModel, videoInput(spec));
    const created = await this.http.post(path, body, { timeoutMs: this.timeoutMs });
    if (created.kind === 'unreachable') throw asUpstreamError(created.error, created.timedOut);
    if (created.kind === 'http-error') throw errorForStatus(created.status, created.text, undefined, created.retryAfter);
    return { queueId: created.prediction.id };
  }

  async poll(job: { queueId: string; submittedAt: Date; spec: VideoJobSpec }): Promise<VideoPollResult> {
    const polled = await this.http.get(predictionPath(job.queueId), { timeoutMs: this.timeoutMs });
    if (polled.kind === 'http-error' && (polled.status === 404 || polled.status === 410)) {
      return { state: 'failed', reason: 'The provider no longer knows this job.' };
    }
    if (polled.kind !== 'ok') return PROCESSING;
    const { status, output, error, logs } = polled.prediction;
    if (status === 'succeeded') return this.collect(output);
    if (status === 'failed') return { state: 'failed', reason: videoFailureReason(error) };
    if (status === 'canceled' || status === 'aborted') return { state: 'failed', reason: 'cancelled' };
    // starting, processing, and anything we do not recognise: ask again later, with the share
    // done when the model's logs show a progress bar.
    const progress = progressFromLogs(logs);
    return progress === undefined ? PROCESSING : { state: 'processing', progress };
  }

  /**
   * Stops a prediction. Any answer but a 429 or a 5xx is Replicate's last word (a finished
   * prediction is answered unchanged, an unknown one 404); no answer, or one of those, throws, to
   * be asked again.
   */
  async cancel(job: SubmittedJob): Promise<void> {
    const status = await this.http.cancel(job.queueId, this.timeoutMs);
    if (status === null || status === 429 || status >= 500)
      throw upstreamError(`Replicate's cancel ${status === null ? 'got no answer' : `answered ${status}`}.`);
  }

  /** Closes the adapter's own connection pool (shutdown, tests). */
  close(): Promise<void> {
    return this.http.close();
  }

  private async collect(output: unknown): Promise<VideoPollResult> {
    const [url] = outputUrls(output);
    if (url === undefined) return { state: 'failed', reason: 'The provider finished without producing a video.' };
    let media: GeneratedImage;
    try {
      media = await downloadOutput(url, this.fetchMedia);
    } catch {
      return { state: 'failed', reason: 'The generated video could not be downloaded from the provider.' };
    }
    // Trust the downloaded type when it is a video type; delivery CDNs may answer octet-stream.
    return { state: 'completed', video: { data: media.data, contentType: media.contentType.startsWith('video/') ? media.contentType : 'video/mp4' } };
  }
}
