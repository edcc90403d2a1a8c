/**
 * A refusal kept as an idempotent call's answer (JSON in the claim's row) and thrown again on a
 * repeat. Its path and words are kept, so a door names the field on the repeat in its own
 * spelling, as it did the first time; `message` and `param` are REST's rendering of them.
 */
import { DomainError, type ErrorType } from '../errors/domain-error';
import { pathOf, Wording, type FieldPath } from '../errors/field-path';

export interface StoredError {
  type: ErrorType;
  message: string;
  code?: string | null;
  param?: string | null;
  path?: FieldPath | null;
  words?: readonly string[];
}

export function storedError(err: DomainError): StoredError {
  return { type: err.type, message: err.message, code: err.code, param: err.param, path: err.fieldPath, words: err.wording.pieces };
}

export function fromStored(stored: StoredError): DomainError {
  if (stored.words) return new DomainError(stored.type, new Wording(stored.words), { code: stored.code, fieldPath: stored.path });
  // A row that keeps only the text: where its message writes the param, it names the field.
  const param = stored.param ?? null;
  if (param === null) return new DomainError(stored.type, stored.message, { code: stored.code });
  return new DomainError(stored.type, Wording.naming(stored.message, param), { code: stored.code, fieldPath: pathOf(param) });
}
