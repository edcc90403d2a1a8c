import type { DomainError } from '../../domain/errors/domain-error';

/**
 * The OpenAI error body, the only error shape this service writes over HTTP: REST's answers and
 * SSE error events, a refused WebSocket upgrade, a request not received in time.
 */
export function errorBody(err: DomainError) {
  return { error: { message: err.message, type: err.type, code: err.code, param: err.param } };
}
