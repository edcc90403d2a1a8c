/**
 * Paths and query strings carrying text the database cannot store (NUL, unpaired surrogates,
 * or percent-encoding that is not UTF-8): an id that cannot exist is a 404, a query parameter a
 * 400 naming it, before any route runs. Bodies are checked where every input is validated
 * (parseInput), so both doors share that check. A query parameter is also given once, as plain
 * text (but the lists, LIST_PARAMS): a repeated one (`first=1&first=2`) arrives as an array,
 * which the routes' number checks would report as "received NaN".
 */
import type { RequestHandler } from 'express';
import { invalidField, notFound, type DomainError } from '../domain/errors/domain-error';
import { assertStorableText, hasUnstorableText } from '../domain/shared/validate';

function decodedPath(path: string): string | null {
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}

/**
 * The 404 a path that cannot exist gets: the one its route gives an id it does not know, so a
 * NUL or a broken escape (`%00`, `%ED%A0%80`) in a media or key id reads like any other unknown id.
 */
const NOT_FOUND_BY_PREFIX: Array<[string, () => DomainError]> = [
  ['/media/', () => notFound('No such media.', 'media_not_found')],
  ['/account/api-keys/', () => notFound('No API key with that id.', 'key_not_found', ['id'])],
  ['/v1/responses/', () => notFound('No response with that id.', 'response_not_found', ['response_id'])],
];

function unknownPath(path: string): DomainError {
  const hit = NOT_FOUND_BY_PREFIX.find(([prefix]) => path.startsWith(prefix));
  return hit ? hit[1]() : notFound('No such resource.', 'not_found');
}

export const storableText: RequestHandler = (req, _res, next) => {
  const path = decodedPath(req.path);
  if (path === null || hasUnstorableText(path)) return next(unknownPath(req.path));
  try {
    assertStorableText(req.query);
  } catch (err) {
    return next(err);
  }
  for (const [name, value] of Object.entries(req.query)) {
    if (typeof value === 'string' || (LIST_PARAMS.has(name) && Array.isArray(value) && value.every((v) => typeof v === 'string'))) continue;
    return next(invalidField([name.slice(0, 64)], 'give it once, as plain text.'));
  }
  next();
};

/**
 * The query parameters that are lists, given once per value: the OpenAI SDK sends
 * `include: ['a', 'b']` as `include[]=a&include[]=b`, which a Responses retrieve or its input
 * items must take rather than refuse as "given more than once".
 */
const LIST_PARAMS = new Set(['include', 'include[]']);
