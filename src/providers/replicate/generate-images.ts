/**
 * Image generation on Replicate: one create in sync mode (`Prefer: wait=N`, the answer is held
 * until the prediction ends or N seconds pass), then polling while it still runs, all within
 * the adapter's timeout. A prediction we give up on (deadline, the caller left) is cancelled,
 * best-effort, so it stops running and being billed.
 */
import { contentPolicyViolation, upstreamError } from '../../domain/errors/domain-error';
import { pause } from '../../domain/shared/call-signal';
import { CallTimedOut, callerAbortReason } from '../shared/collected-call';
import { asUpstreamError, errorForStatus } from '../shared/upstream-errors';
import { sniffImageType } from '../openai-compatible/image-results';
import type { GeneratedImage, GeneratedImages, ImageGenerationRequest } from '../ports';
import type { FetchMedia } from '../shared/fetch-media';
import { failureCause, isPolicyFailure } from './failure-reason';
import { createCall, imageInput } from './prediction-input';
import { downloadOutput, outputUrls } from './prediction-output';
import { type Prediction, predictionPath, type ReplicateHttp, TERMINAL } from './replicate-http';

export interface ImageSettings {
  timeoutMs: number;
  /** Seconds the create may be held (0: no sync mode). */
  waitSeconds: number;
  pollIntervalMs: number;
  fetchMedia: FetchMedia;
  /** Our key and base URL, kept out of what is logged of an upstream's words. */
  secrets: string[];
}

export async function generateImages(http: ReplicateHttp, request: ImageGenerationRequest, settings: ImageSettings): Promise<GeneratedImages> {
  const deadline = Date.now() + settings.timeoutMs;
  const { signal } = request;
  const { path, body } = createCall(request.upstreamModel, imageInput(request));
  // Cancel-After makes Replicate end the prediction by our deadline itself: a create whose
  // answer never reaches us (the caller left, the connection broke) leaves us no id to cancel.
  const headers: Record<string, string> = { 'cancel-after': `${Math.max(1, Math.ceil(settings.timeoutMs / 1000))}s` };
  if (settings.waitSeconds >= 1) headers.prefer = `wait=${settings.waitSeconds}`;
  const created = await http.post(path, body, { timeoutMs: settings.timeoutMs, signal, headers });
  if (created.kind === 'unreachable') throw asUpstreamError(created.error, created.timedOut);
  if (created.kind === 'http-error') throw errorForStatus(created.status, created.text, undefined, created.retryAfter);

  let prediction = created.prediction;
  while (!TERMINAL.has(prediction.status)) {
    const left = deadline - Date.now();
    if (signal?.aborted || left <= 0) {
      // Not awaited: the caller is told at once; the cancel finishes (or fails) on its own.
      void http.cancel(prediction.id, settings.timeoutMs);
      throw signal?.aborted ? asUpstreamError(callerAbortReason(signal)) : asUpstreamError(new CallTimedOut(settings.timeoutMs), true);
    }
    await pause(Math.min(settings.pollIntervalMs, left), signal);
    if (signal?.aborted) continue;
    const polled = await http.get(predictionPath(prediction.id), { timeoutMs: Math.max(1, deadline - Date.now()), signal });
    if (polled.kind === 'ok') prediction = polled.prediction;
    else if (polled.kind === 'http-error' && !isTransient(polled.status)) {
      // Replicate no longer knows the prediction it created (or refuses us it): nothing to wait
      // for. Not an UpstreamHttpError cause: the create was accepted, so a retry is not free.
      throw upstreamError(undefined, new Error(`Replicate answered HTTP ${polled.status} to a poll`));
    }
    // A poll without an answer, or a transient one: ask again until the deadline.
  }
  return settle(prediction, request, settings);
}

async function settle(prediction: Prediction, request: ImageGenerationRequest, settings: ImageSettings): Promise<GeneratedImages> {
  if (prediction.status === 'failed') {
    if (isPolicyFailure(prediction.error)) throw contentPolicyViolation();
    throw upstreamError('The model provider failed to generate the image.', failureCause('failed', prediction.error, settings.secrets));
  }
  if (prediction.status !== 'succeeded') {
    throw upstreamError('The model provider cancelled the generation.', failureCause(prediction.status, prediction.error, settings.secrets));
  }
  const urls = outputUrls(prediction.output).slice(0, request.n);
  if (urls.length === 0) throw upstreamError(undefined, new Error('Replicate prediction succeeded without an output'));
  return Promise.all(
    urls.map(async (url): Promise<GeneratedImage> => {
      let media: GeneratedImage;
      try {
        media = await downloadOutput(url, settings.fetchMedia);
      } catch (err) {
        throw upstreamError("The model provider's image could not be downloaded.", err);
      }
      // Delivery CDNs sometimes answer octet-stream; the bytes say what the image is.
      return media.contentType.startsWith('image/') ? media : { data: media.data, contentType: sniffImageType(media.data) };
    }),
  );
}

function isTransient(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}
