import { DomainError } from '../../domain/errors/domain-error';

/**
 * What a call whose media could not be stored (or read) answers, whichever store holds them: 503
 * with Retry-After. Nothing is charged: a call's charge comes after its media are stored.
 */
export function storageUnavailable(cause: unknown): DomainError {
  return new DomainError('service_unavailable', 'Media storage is temporarily unavailable; retry shortly.', {
    code: 'storage_unavailable',
    retryAfterSeconds: 30,
    cause,
  });
}
