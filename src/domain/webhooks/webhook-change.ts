import { invalidField, invalidRequest } from '../errors/domain-error';
import { asWritten, FIELD, words } from '../errors/field-path';
import { randomBase62 } from '../shared/ids';
import { assertStorableText } from '../shared/validate';

/** What a webhook body asks: register `url` (its check is the caller's, with its URL guard), clear, or make a new secret. */
export type WebhookChange = { kind: 'set'; url: unknown } | { kind: 'clear' } | { kind: 'regenerate' };

/**
 * SPEC's webhook body, for a key's webhook and the account's alike: `{ url }` registers (a new
 * secret), `{ regenerateSecret: true }` rotates the secret, `{ url: null }` clears both.
 */
export function parseWebhookChange(input: unknown): WebhookChange {
  const body = (input ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('The body must be a JSON object.');
  assertStorableText(body);
  const unknownField = Object.keys(body).find((k) => k !== 'url' && k !== 'regenerateSecret');
  if (unknownField) throw invalidRequest(`Unknown field '${unknownField}'.`, [asWritten(unknownField)]);
  if ('url' in body) return body.url === null ? { kind: 'clear' } : { kind: 'set', url: body.url };
  if (body.regenerateSecret === true) return { kind: 'regenerate' };
  // `regenerateSecret: false` (or any value but true) is a field sent wrong, named as such.
  if ('regenerateSecret' in body) throw invalidField(['regenerateSecret'], "must be true (send 'url': null to remove the webhook).");
  throw invalidRequest(words`The body must carry '${FIELD}' (a URL or null) or 'regenerateSecret': true.`, ['url']);
}

/** A webhook's signing secret: shown once, when it is made. */
export const newWebhookSecret = (): string => `whsec_${randomBase62(32)}`;

/** A rotation asked of a webhook that has none. */
export const nothingToRegenerate = (whose: string) => invalidRequest(`${whose} has no webhook to regenerate a secret for.`, ['regenerateSecret']);
