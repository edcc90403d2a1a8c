import { Router, type RequestHandler, type Response } from 'express';
import multer from 'multer';
import { copyOnArrivalStorage } from '../upload-storage';
import type { ImageService } from '../../domain/images/image-service';
import type { ImageResult } from '../../domain/images/image-output';
import type { InputFile } from '../../domain/images/image-port';
import { keyOf } from '../auth';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';
import { IDEMPOTENCY_HEADER } from '../../domain/idempotency/idempotency-service';
import { multipartMalformed, toDomainError } from '../error-middleware';
import { cappedStreamHandler, declaredSizeCap, MAX_MULTIPART_BODY_BYTES } from '../upload-cap';
import { jsonBody } from '../json-body';
import { multipartTextFields, requireMultipart } from '../multipart-fields';
import { callLifetime, type StreamTerms } from '../sse/sse-writer';
import type { CallSignal } from '../../domain/shared/call-signal';
import { answerImageStream } from './image-stream';

/**
 * Cancels the provider call when the client leaves before its images (nothing is charged), as a
 * plain chat call is: without an Idempotency-Key nobody could ever fetch what it would have paid
 * for. With one, the call goes on, is charged once and its answer is stored for the retry.
 */
function leaveSignal(res: Response): CallSignal | undefined {
  return res.locals.idempotency ? undefined : callLifetime(res).signal;
}

/** Per file (OpenAI's own per-image figure for its older edit models). */
export const MAX_EDIT_FILE_BYTES = 20 * 1024 * 1024;

function sendImages(res: Response, out: ImageResult): void {
  res.set(out.headers).set('x-svc-credits', String(out.costCredits));
  // What the provider said besides the images (usage, size, …) comes after them, as OpenAI orders it.
  res.json({ created: out.created, data: out.data, ...out.about });
}

/**
 * POST /v1/images/generations (JSON), or its event stream (`stream: true`, image-stream.ts);
 * `idempotency` after the parser, which it needs (a stream ignores it, as a chat stream does).
 */
export function imageGenerationRoutes(images: ImageService, terms: StreamTerms = {}, idempotency?: RequestHandler): Router {
  const r = Router();
  r.post('/images/generations', jsonBody(), ...(idempotency ? [idempotency] : []), async (req, res) => {
    const key = keyOf(res);
    const log = callLogOf(res);
    if (images.isStream(req.body)) return answerImageStream(res, 'image_generation', terms, (signal) => images.generateStream(key, req.body, signal, log));
    sendImages(res, await images.generate(key, req.body, callOf(res), leaveSignal(res), log));
  });
  return r;
}

/**
 * POST /v1/images/edits: multipart as the OpenAI SDK sends it (`image` or `image[]`, optional
 * `mask`), answered as JSON or, with `stream` `true`, as events (image-stream.ts). In this order, so each step costs a stranger less than the next: the key (already
 * authenticated by /v1), the Content-Type, the image rate limit, the declared size, the Idempotency-Key (which
 * reads the body to fingerprint it), then the upload itself, capped while it streams.
 */
export function imageEditRoutes(images: ImageService, terms: StreamTerms = {}, idempotency?: RequestHandler): Router {
  const upload = multer({
    storage: copyOnArrivalStorage(MAX_EDIT_FILE_BYTES),
    limits: { fileSize: MAX_EDIT_FILE_BYTES, files: 17, fields: 20, fieldSize: 64 * 1024, parts: 40 },
    // multer 2.5's option (missing from @types/multer 2.3).
    streamHandler: cappedStreamHandler(MAX_MULTIPART_BODY_BYTES),
  } as multer.Options).fields([
    { name: 'image', maxCount: 16 },
    { name: 'image[]', maxCount: 16 },
    { name: 'mask', maxCount: 1 },
  ]);
  // busboy's own refusals (no boundary, a malformed part header, an early end) are plain Errors: the client's, so 400s.
  const parseUpload: RequestHandler = (req, res, next) =>
    upload(req, res, (err?: unknown) => next(err === undefined || toDomainError(err) ? err : multipartMalformed()));
  // An edit with an Idempotency-Key is counted by the call, after its claim: a retry whose first
  // run was charged (on an instance that died before answering) is answered, never refused by a
  // limit that run passed. Its body is read for the fingerprint first, within the declared-size cap.
  const admit: RequestHandler = (req, res, next) => {
    if (req.get(IDEMPOTENCY_HEADER) !== undefined) return next();
    images.admitEdit(keyOf(res)).then((headers) => {
      res.locals.rateHeaders = headers;
      next();
    }, next);
  };
  const toInput = (f: Express.Multer.File): InputFile => ({ data: f.buffer, filename: f.originalname, contentType: f.mimetype });
  const r = Router();
  r.post(
    '/images/edits',
    requireMultipart,
    admit,
    declaredSizeCap(MAX_MULTIPART_BODY_BYTES),
    ...(idempotency ? [idempotency] : []),
    parseUpload,
    async (req, res) => {
      const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
      const imageFiles = [...(files['image'] ?? []), ...(files['image[]'] ?? [])].map(toInput);
      const mask = files['mask']?.[0];
      const input = { images: imageFiles, mask: mask ? toInput(mask) : undefined };
      const key = keyOf(res);
      const fields = multipartTextFields(req.body);
      const admitted = res.locals.rateHeaders as Record<string, string> | undefined;
      const log = callLogOf(res);
      if (images.isStream(fields)) return answerImageStream(res, 'image_edit', terms, (signal) => images.editStream(key, fields, input, admitted, signal, log));
      sendImages(res, await images.edit(key, fields, input, admitted, callOf(res), leaveSignal(res), log));
    },
  );
  return r;
}
