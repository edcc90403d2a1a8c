/**
 * The answer a request will never get because its client left first. Something wrapped around a
 * handler that must learn how the request ended (the Idempotency-Key claim, which otherwise stays
 * "in use" while its holder heartbeats it, for 15 minutes) leaves a hook on the response; the
 * one error path calls it with the failure it would have sent, instead of writing to nobody.
 */
import type { ServerResponse } from 'node:http';
import type { DomainError } from '../domain/errors/domain-error';

const HOOK = Symbol('abandoned-answer');
type Hooked = ServerResponse & { [HOOK]?: (err: DomainError) => void };

export function onAbandonedAnswer(res: ServerResponse, hook: (err: DomainError) => void): void {
  (res as Hooked)[HOOK] = hook;
}

/** Once at most: the hook is dropped when called (or when the answer was written after all). */
export function forgetAbandonedAnswer(res: ServerResponse): void {
  (res as Hooked)[HOOK] = undefined;
}

export function answerAbandoned(res: ServerResponse, err: DomainError): void {
  const hook = (res as Hooked)[HOOK];
  if (!hook) return;
  (res as Hooked)[HOOK] = undefined;
  hook(err);
}

/** The error a request whose client left before it was read is ended with: nothing runs for it. */
export function clientGone(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}
