/**
 * How the WebSocket door closes a connection whose credential check failed, so a client can
 * tell what to do: the credential refused is 4403 with the reason in words (renew an expired
 * token; stop or sign in again for a revoked key; send it as `Bearer …`); a check that could not
 * be made (the database away: HTTP answers 503 then) is 1013 "Try Again Later", which graphql-ws's
 * client retries, and not a 4403, on which the console signs out.
 */
import { CloseCode } from 'graphql-ws';
import type { WebSocket } from 'ws';
import type { DomainError } from '../domain/errors/domain-error';

/** graphql-ws's close code for a refused credential (4403). */
export const FORBIDDEN = CloseCode.Forbidden;
/** RFC 6455's "Try Again Later": retried by graphql-ws's client (its InternalServerError, 4500, is not). */
export const TRY_AGAIN_LATER = 1013;

/** Whether the error is a verdict on the credential itself (401, 403), not a failure to check it. */
export const refusesCredential = (err: DomainError): boolean => err.status === 401 || err.status === 403;

export function closeRefused(socket: WebSocket, err: DomainError): void {
  if (refusesCredential(err)) socket.close(FORBIDDEN, closeReason(`Forbidden: ${err.message}`));
  else socket.close(TRY_AGAIN_LATER, closeReason(`Try again later: ${err.message}`));
}

/** A close frame's reason is at most 123 bytes of UTF-8: cut at a character, with an ellipsis. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= 123) return text;
  let out = text;
  while (Buffer.byteLength(out) > 120) out = out.slice(0, -1);
  return `${out}…`;
}
