import { Router } from 'express';
import type { MediaLibrary } from '../../domain/media/media-library';
import { notFound } from '../../domain/errors/domain-error';

/** GET /media/<id>/<token>.<ext>: no Authorization header, the token in the path is the credential. */
export function mediaRoutes(media: MediaLibrary): Router {
  const r = Router();
  r.get('/media/:id/:file', async (req, res) => {
    const token = req.params.file.replace(/\.[a-z0-9]+$/, '');
    const found = /^med_[A-Za-z0-9]+$/.test(req.params.id) ? await media.read(req.params.id, token) : null;
    if (!found) throw notFound('No such media.', 'media_not_found');
    res.setHeader('Content-Type', found.contentType);
    res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
    res.send(found.data);
  });
  return r;
}
