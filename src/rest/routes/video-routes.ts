import { Router, type RequestHandler } from 'express';
import type { VideoService } from '../../domain/video/video-service';
import { acceptedView, retrieveView } from '../../domain/video/video-job';
import { keyOf } from '../auth';
import { jsonBody } from '../json-body';
import { callIdOf } from '../idempotency-middleware';

/** /v1/video/quote, /queue, /motion-control and /retrieve; `idempotency` on the billed two, after the parser. */
export function videoRoutes(video: VideoService, idempotency?: RequestHandler): Router {
  const idem = idempotency ? [idempotency] : [];
  const r = Router();
  r.post('/video/quote', jsonBody(), (req, res) => {
    res.json(video.quote(keyOf(res), req.body));
  });
  r.post('/video/queue', jsonBody(), ...idem, async (req, res) => {
    const { job, headers } = await video.queue(keyOf(res), req.body, callIdOf(res));
    res.set(headers).json(acceptedView(job));
  });
  r.post('/video/motion-control', jsonBody(), ...idem, async (req, res) => {
    const { job, headers } = await video.motionControl(keyOf(res), req.body, callIdOf(res));
    res.set(headers).json(acceptedView(job));
  });
  r.post('/video/retrieve', jsonBody(), async (req, res) => {
    res.json(retrieveView(await video.retrieve(keyOf(res), req.body)));
  });
  return r;
}
