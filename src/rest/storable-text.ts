/**
 * Paths and query strings carrying text the database cannot store (NUL, unpaired surrogates,
 * or percent-encoding that is not UTF-8): an id that cannot exist is a 404, a query parameter a
 * 400 naming it, before any route runs. Bodies are checked where every input is validated
 * (parseInput), so both doors share that check.
 */
import type { RequestHandler } from 'express';
import { notFound } from '../domain/errors/domain-error';
import { assertStorableText, hasUnstorableText } from '../domain/shared/validate';

function decodedPath(path: string): string | null {
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}

export const storableText: RequestHandler = (req, _res, next) => {
  const path = decodedPath(req.path);
  if (path === null || hasUnstorableText(path)) return next(notFound('No such resource.', 'not_found'));
  try {
    assertStorableText(req.query);
  } catch (err) {
    return next(err);
  }
  next();
};

