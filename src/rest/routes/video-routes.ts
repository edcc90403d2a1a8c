import { Router, type RequestHandler, type Response } from 'express';
import type { VideoService } from '../../domain/video/video-service';
import { acceptedView, retrieveView, type VideoJob } from '../../domain/video/video-job';
import { keyOf } from '../auth';
import { jsonBody } from '../json-body';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';

/** /v1/video/quote, /queue, /motion-control and /retrieve; `idempotency` on the billed two, after the parser. */
export function videoRoutes(video: VideoService, idempotency?: RequestHandler): Router {
  const idem = idempotency ? [idempotency] : [];
  const r = Router();
  r.post('/video/quote', jsonBody(), (req, res) => {
    res.json(video.quote(keyOf(res), req.body));
  });
  // Charged in full when accepted: `x-svc-credits` says so, as on every billed call.
  const accepted = (res: Response, { job, headers }: { job: VideoJob; headers: Record<string, string> }) =>
    res.set({ ...headers, 'x-svc-credits': String(job.creditsCharged) }).json(acceptedView(job));
  r.post('/video/queue', jsonBody(), ...idem, async (req, res) => {
    accepted(res, await video.queue(keyOf(res), req.body, callOf(res), callLogOf(res)));
  });
  r.post('/video/motion-control', jsonBody(), ...idem, async (req, res) => {
    accepted(res, await video.motionControl(keyOf(res), req.body, callOf(res), callLogOf(res)));
  });
  r.post('/video/retrieve', jsonBody(), async (req, res) => {
    res.json(retrieveView(await video.retrieve(keyOf(res), req.body)));
  });
  return r;
}
