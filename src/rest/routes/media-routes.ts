import { Router } from 'express';
import type { MediaLibrary } from '../../domain/media/media-library';
import { notFound } from '../../domain/errors/domain-error';
import { sendBlob } from '../blob-response';

/**
 * GET /media/<id>/<token>.<ext>: no Authorization header, the token in the path is the
 * credential. Streamed from the store (never read whole into memory), with Range support (206)
 * so a browser can seek a video; the content type comes from an allow-list, with nosniff.
 */
export function mediaRoutes(media: MediaLibrary): Router {
  const r = Router();
  r.get('/media/:id/:file', async (req, res) => {
    const token = req.params.file.replace(/\.[a-z0-9]+$/, '');
    const found = /^med_[A-Za-z0-9]+$/.test(req.params.id) ? await media.open(req.params.id, token) : null;
    if (!found) throw notFound('No such media.', 'media_not_found');
    sendBlob(req, res, found, 'private, max-age=31536000, immutable');
  });
  return r;
}
