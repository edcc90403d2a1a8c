import { Router, type RequestHandler, type Response } from 'express';
import multer from 'multer';
import type { VideoService } from '../../domain/video/video-service';
import type { OpenAIVideos } from '../../domain/video/openai-videos';
import { contentVariant, type VideoControls } from '../../domain/video/video-controls';
import { deletedVideo, videoList, videoObject } from '../../domain/video/openai-video-view';
import { videosPage } from '../../domain/video/video-lists';
import type { AcceptedJob } from '../../domain/video/video-service';
import { keyOf } from '../auth';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';
import { jsonBody } from '../json-body';
import { multipartMalformed, toDomainError } from '../error-middleware';
import { cappedStreamHandler, declaredSizeCap } from '../upload-cap';
import { copyOnArrivalStorage } from '../upload-storage';
import { multipartTextFields } from '../multipart-fields';
import { sendBlob } from '../blob-response';
import { MAX_EDIT_FILE_BYTES } from './image-routes';

/** One reference image, its fields, and room for a data: URL as text: well within an edit's 50 MB. */
const MAX_VIDEO_BODY_BYTES = 32 * 1024 * 1024;

/**
 * OpenAI's Videos API (`client.videos.*`) over the same jobs as /v1/video/*: create (multipart, as
 * the SDK sends it, or JSON), retrieve, list, delete, cancel and content. The Idempotency-Key of a
 * create is honoured on either body: `idempotency.raw` fingerprints a multipart body before the
 * upload is parsed, `idempotency.json` a parsed JSON one.
 */
export function videosRoutes(
  deps: { video: VideoService; videos: OpenAIVideos; controls: VideoControls },
  idempotency: { json?: RequestHandler; raw?: RequestHandler } = {},
): Router {
  const upload = multer({
    storage: copyOnArrivalStorage(MAX_EDIT_FILE_BYTES),
    limits: { fileSize: MAX_EDIT_FILE_BYTES, files: 1, fields: 10, fieldSize: MAX_VIDEO_BODY_BYTES, parts: 12 },
    // multer 2.5's option (missing from @types/multer 2.3).
    streamHandler: cappedStreamHandler(MAX_VIDEO_BODY_BYTES),
  } as multer.Options).fields([{ name: 'input_reference', maxCount: 1 }]);
  const parseUpload: RequestHandler = (req, res, next) =>
    upload(req, res, (err?: unknown) => next(err === undefined || toDomainError(err) ? err : multipartMalformed()));
  // A multipart create goes down the first route; any other body to the JSON one.
  const multipartOnly: RequestHandler = (req, _res, next) => next(req.is('multipart/form-data') === 'multipart/form-data' ? undefined : 'route');

  const created = (res: Response, { job, headers }: AcceptedJob) => res.set({ ...headers, 'x-svc-credits': String(job.creditsCharged) }).json(videoObject(job));
  const r = Router();
  r.post('/videos', multipartOnly, declaredSizeCap(MAX_VIDEO_BODY_BYTES), ...(idempotency.raw ? [idempotency.raw] : []), parseUpload, async (req, res) => {
    const file = ((req.files ?? {}) as Record<string, Express.Multer.File[]>)['input_reference']?.[0];
    const reference = file && { data: file.buffer, filename: file.originalname, contentType: file.mimetype };
    created(res, await deps.videos.create(keyOf(res), multipartTextFields(req.body), reference, callOf(res), callLogOf(res)));
  });
  r.post('/videos', jsonBody(), ...(idempotency.json ? [idempotency.json] : []), async (req, res) => {
    created(res, await deps.videos.create(keyOf(res), req.body, undefined, callOf(res), callLogOf(res)));
  });
  r.get('/videos', async (req, res) => {
    res.json(videoList(await deps.video.list(keyOf(res).accountId, videosPage({ ...req.query }))));
  });
  r.get('/videos/:id', async (req, res) => {
    res.json(videoObject(await deps.video.get(keyOf(res).accountId, String(req.params.id))));
  });
  r.delete('/videos/:id', async (req, res) => {
    res.json(deletedVideo(await deps.controls.remove(keyOf(res), String(req.params.id))));
  });
  r.post('/videos/:id/cancel', async (req, res) => {
    res.json(videoObject(await deps.controls.cancel(keyOf(res), String(req.params.id))));
  });
  r.get('/videos/:id/content', async (req, res) => {
    const found = await deps.controls.content(keyOf(res).accountId, String(req.params.id), contentVariant({ ...req.query }));
    sendBlob(req, res, found, 'no-store');
  });
  return r;
}
