import { Router, type RequestHandler, type Response } from 'express';
import type { VideoService } from '../../domain/video/video-service';
import type { VideoControls } from '../../domain/video/video-controls';
import { jobsPage } from '../../domain/video/video-lists';
import { acceptedView, listedView, retrieveView, type VideoJob } from '../../domain/video/video-job';
import { parseInput } from '../../domain/shared/validate';
import { retrieveSchema } from '../../domain/video/video-requests';
import { keyOf } from '../auth';
import { jsonBody } from '../json-body';
import { callOf } from '../idempotency-middleware';
import { callLogOf } from '../call-logs';

/**
 * /v1/video/quote, /queue, /motion-control, /retrieve and /cancel, and the account's job list
 * (/v1/video/jobs); `idempotency` on the billed two, after the parser.
 */
export function videoRoutes(video: VideoService, controls: VideoControls, idempotency?: RequestHandler): Router {
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
  r.post('/video/cancel', jsonBody(), async (req, res) => {
    const { id } = parseInput(retrieveSchema, req.body);
    res.json(retrieveView(await controls.cancel(keyOf(res), id)));
  });
  r.get('/video/jobs', async (req, res) => {
    const page = await video.list(keyOf(res).accountId, jobsPage({ ...req.query }));
    res.json({
      object: 'list',
      data: page.jobs.map(listedView),
      has_more: page.hasNextPage,
      next_cursor: page.hasNextPage ? (page.jobs.at(-1)?.id ?? null) : null,
    });
  });
  return r;
}
