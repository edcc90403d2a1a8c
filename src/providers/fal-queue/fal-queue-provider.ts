/**
 * VideoProvider for a fal.ai-style queue API (video generation and motion control).
 *
 * Wire protocol (all JSON, `Authorization: Key <apiKey>`):
 *   submit  POST {baseUrl}/{upstreamModel}                          body: see submit-body.ts
 *           → 200 { request_id, status_url, response_url }
 *   poll    GET  {baseUrl}/{upstreamModel}/requests/{request_id}/status?logs=1
 *           → 200 { status: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED', queue_position?, logs?, error? }
 *   result  GET  {baseUrl}/{upstreamModel}/requests/{request_id}     (once COMPLETED)
 *           → 200 { video: { url, content_type? } }, then the video is downloaded via fetchMedia
 *   cancel  PUT  {baseUrl}/{upstreamModel}/requests/{request_id}/cancel
 *           → 202 CANCELLATION_REQUESTED, 400 ALREADY_COMPLETED, 404 for a request it does not know
 *
 * Polling is stateless: the queue id and the spec are all we need, so a restarted gateway can
 * resume jobs submitted before it went down. A job in the queue is at 0%; a running one at the
 * last percentage its logs printed (fal-progress.ts).
 *
 * What a failure means:
 * - submit fails (network, timeout, non-2xx, no request_id) → throws upstream_error (or
 *   content_policy_violation for a 400/422 content refusal): the job was never accepted.
 * - poll cannot get an answer (network, timeout, 5xx, 429, a body that is not JSON) → reports
 *   `processing`. These are usually transient and the next poll may succeed; a job that never
 *   recovers is ended by its deadline (VIDEO_JOB_TIMEOUT_SECONDS), which fails and refunds it.
 *   Failing on the first blip would refund jobs the upstream may still finish and bill us for.
 * - a definite answer that the job cannot finish → `failed` with a short reason: status FAILED,
 *   the upstream no longer knows the request (404/410 on status), a 4xx on the result (e.g. a
 *   source image URL that expired), a result without a video, or a video we cannot download.
 */
import type { MediaUpstreamOptions } from '../shared/upstream-connection';
import { upstreamError } from '../../domain/errors/domain-error';
import { errorForStatus } from '../shared/upstream-errors';
import type { GeneratedImage, VideoJobSpec, VideoPollResult, VideoProvider } from '../ports';
import { FalHttp, type FalOutcome } from './fal-http';
import { reasonFromRejectedResult, reasonFromUpstreamError } from './failure-reason';
import { submitBody } from './submit-body';
import { progressOfStatus } from './fal-progress';
import type { SubmittedJob } from '../../domain/video/video-port';

export interface FalQueueOptions extends MediaUpstreamOptions {
  /** Deadline of each single HTTP call (submit, status, result), not of the job. */
  timeoutMs: number;
}

const PROCESSING: VideoPollResult = { state: 'processing' };

export class FalQueueVideoProvider implements VideoProvider {
  private readonly http: FalHttp;
  private readonly baseUrl: string;
  private readonly fetchMedia: FalQueueOptions['fetchMedia'];

  constructor(options: FalQueueOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.http = new FalHttp(options.apiKey, options.timeoutMs, options.dispatcher, options.propagate);
    this.fetchMedia = options.fetchMedia;
  }

  async submit(spec: VideoJobSpec): Promise<{ queueId: string }> {
    const outcome = await this.http.post(`${this.baseUrl}/${spec.upstreamModel}`, submitBody(spec));
    if (outcome.kind === 'unreachable') throw upstreamError(undefined, outcome.error);
    if (outcome.kind === 'http-error') throw errorForStatus(outcome.status, outcome.text);
    const requestId = (outcome.json as { request_id?: unknown } | null)?.request_id;
    if (typeof requestId !== 'string' || requestId.length === 0) {
      throw upstreamError(undefined, new Error('fal submit answer has no request_id'));
    }
    return { queueId: requestId };
  }

  async poll(job: { queueId: string; submittedAt: Date; spec: VideoJobSpec }): Promise<VideoPollResult> {
    const requestUrl = `${this.baseUrl}/${job.spec.upstreamModel}/requests/${encodeURIComponent(job.queueId)}`;
    const status = await this.http.get(`${requestUrl}/status?logs=1`);
    if (status.kind !== 'ok') return pollFailure(status);
    const { status: state, error } = (status.json ?? {}) as { status?: unknown; error?: unknown };
    if (state === 'FAILED') return { state: 'failed', reason: reasonFromUpstreamError(error) };
    // IN_QUEUE, IN_PROGRESS and anything we do not recognise: ask again later.
    if (state !== 'COMPLETED') {
      const progress = progressOfStatus(status.json);
      return progress === undefined ? PROCESSING : { state: 'processing', progress };
    }
    return this.collect(requestUrl);
  }

  /**
   * Stops a request. Any answer but a 429 or a 5xx is fal's last word (a finished request answers
   * 400, an unknown one 404); no answer, or one of those, throws, to be asked again.
   */
  async cancel(job: SubmittedJob): Promise<void> {
    const outcome = await this.http.put(`${this.baseUrl}/${job.spec.upstreamModel}/requests/${encodeURIComponent(job.queueId)}/cancel`);
    if (outcome.kind === 'unreachable') throw upstreamError("fal's cancel got no answer.", outcome.error);
    if (outcome.kind === 'http-error' && isTransient(outcome.status)) throw upstreamError(`fal's cancel answered ${outcome.status}.`);
  }

  /** Closes the adapter's own connection pool (shutdown, tests). */
  close(): Promise<void> {
    return this.http.close();
  }

  /** Fetches the result of a COMPLETED request and downloads its video. */
  private async collect(requestUrl: string): Promise<VideoPollResult> {
    const result = await this.http.get(requestUrl);
    if (result.kind === 'unreachable') return PROCESSING;
    if (result.kind === 'http-error') {
      if (isTransient(result.status)) return PROCESSING;
      return { state: 'failed', reason: reasonFromRejectedResult(result.status, result.text) };
    }
    const video = (result.json as { video?: { url?: unknown; content_type?: unknown } } | null)?.video;
    if (typeof video?.url !== 'string' || video.url.length === 0) {
      return { state: 'failed', reason: 'The provider finished without producing a video.' };
    }
    let media: GeneratedImage;
    try {
      media = await this.fetchMedia(video.url);
    } catch {
      return { state: 'failed', reason: 'The generated video could not be downloaded from the provider.' };
    }
    // Trust the downloaded media type when it is a video type; some CDNs answer octet-stream.
    const contentType = media.contentType.startsWith('video/')
      ? media.contentType
      : typeof video.content_type === 'string' && video.content_type.startsWith('video/')
        ? video.content_type
        : 'video/mp4';
    return { state: 'completed', video: { data: media.data, contentType } };
  }
}

/** A status call that did not answer 2xx JSON. Only "this request does not exist" is final. */
function pollFailure(outcome: Exclude<FalOutcome, { kind: 'ok' }>): VideoPollResult {
  if (outcome.kind === 'http-error' && (outcome.status === 404 || outcome.status === 410)) {
    return { state: 'failed', reason: 'The provider no longer knows this job.' };
  }
  return PROCESSING;
}

function isTransient(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}
