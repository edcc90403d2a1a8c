import type { z } from 'zod';
import { invalidRequest } from '../errors/domain-error';

/** `['reference_image_urls', 2]` → `reference_image_urls[2]`: the `param` a client can act on. */
export function paramOf(path: readonly PropertyKey[]): string | null {
  if (path.length === 0) return null;
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/**
 * Validates a plain input against a schema; the first problem becomes a 400
 * invalid_request_error naming the field. Both front doors call domain services through this.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = paramOf(issue.path);
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    throw invalidRequest(`Unknown field '${issue.keys[0]}'.`, paramOf([...issue.path, issue.keys[0]!]));
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'is required';
  throw invalidRequest(param ? `Invalid '${param}': ${message}` : message, param);
}
