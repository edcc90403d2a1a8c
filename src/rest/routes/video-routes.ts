import { Router } from 'express';
import type { VideoService } from '../../domain/video/video-service';
import { acceptedView, retrieveView } from '../../domain/video/video-job';
import { keyOf } from '../auth';

/** /v1/video/quote, /queue, /motion-control and /retrieve. */
export function videoRoutes(video: VideoService): Router {
  const r = Router();
  r.post('/video/quote', (req, res) => {
    res.json(video.quote(keyOf(res), req.body));
  });
  r.post('/video/queue', async (req, res) => {
    const { job, headers } = await video.queue(keyOf(res), req.body);
    res.set(headers).json(acceptedView(job));
  });
  r.post('/video/motion-control', async (req, res) => {
    const { job, headers } = await video.motionControl(keyOf(res), req.body);
    res.set(headers).json(acceptedView(job));
  });
  r.post('/video/retrieve', async (req, res) => {
    res.json(retrieveView(await video.retrieve(keyOf(res), req.body)));
  });
  return r;
}
