import type { z } from 'zod';
import { invalidField, invalidRequest } from '../errors/domain-error';
import { asWritten, spellPath, type FieldPath, type PathSegment } from '../errors/field-path';
import { issueWords } from './issue-words';

/** A zod issue's path as the refused field's path (the schemas key nothing by a symbol). */
export const issuePath = (path: readonly PropertyKey[]): PathSegment[] => path.map((p) => (typeof p === 'symbol' ? String(p) : p));

/** `Invalid '<field>': <reason>`; the reason alone where the path names nothing to quote (the whole input, a key written ''). */
const refusal = (path: FieldPath, reason: string) => (spellPath(path) === '' ? invalidRequest(reason, path) : invalidField(path, reason));

/**
 * Validates a plain input against a schema; the first problem becomes a 400
 * invalid_request_error naming the field. Both front doors call domain services through this.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  assertStorableText(input);
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issuePath(issue.path);
  let message = issueWords(issue);
  if (issue.code === 'unrecognized_keys') {
    // A key the schema does not know is named as the client wrote it.
    throw invalidRequest(`Unknown field '${issue.keys[0]}'.`, [...path, asWritten(issue.keys[0])]);
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'is required';
  throw refusal(path, message);
}

/** NUL, or a UTF-16 surrogate without its pair: text PostgreSQL cannot store (or JSON cannot carry). */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_SCAN_DEPTH = 64;

export function hasUnstorableText(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * Refuses any string (value or key, at any depth) that the database could not store, and the key
 * `__proto__`, with a 400 naming where it is, before a schema or a query sees it: one check for
 * every input of both doors. Every request body passes here, so the common case (nothing wrong)
 * is a walk that allocates nothing; the path is only built, by a second walk, for the refusal.
 */
export function assertStorableText(input: unknown, path: PathSegment[] = [], keys: KeySpelling = 'domain'): void {
  if (isStorable(input, 0)) return;
  refuseUnstorable(input, path, 0, keys === 'written' ? asWritten : (k) => k);
}

/** How the keys of a checked input are named in a refusal: as the domain spells them (a REST body), or as the client wrote them (GraphQL variables, already in the door's spelling). */
export type KeySpelling = 'domain' | 'written';

/** Whether nothing in `input` would be refused. */
function isStorable(input: unknown, depth: number): boolean {
  if (typeof input === 'string') return !UNSTORABLE.test(input);
  if (input === null || typeof input !== 'object' || depth > MAX_SCAN_DEPTH) return true;
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) if (!isStorable(input[i], depth + 1)) return false;
    return true;
  }
  for (const k in input) {
    if (!Object.prototype.hasOwnProperty.call(input, k)) continue;
    if (k === '__proto__' || UNSTORABLE.test(k) || !isStorable((input as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
}

/** Throws the 400 for the first thing `isStorable` would refuse, naming where it is. */
function refuseUnstorable(input: unknown, path: PathSegment[], depth: number, key: (k: string) => PathSegment): void {
  if (typeof input === 'string') {
    if (UNSTORABLE.test(input)) {
      throw refusal(path, 'text must not contain NUL characters or unpaired UTF-16 surrogates.');
    }
    return;
  }
  if (input === null || typeof input !== 'object' || depth > MAX_SCAN_DEPTH) return;
  if (Array.isArray(input)) {
    input.forEach((v, i) => refuseUnstorable(v, [...path, i], depth + 1, key));
    return;
  }
  for (const [k, v] of Object.entries(input)) {
    if (UNSTORABLE.test(k)) throw invalidRequest('Field names must not contain NUL characters or unpaired UTF-16 surrogates.', path);
    // JSON.parse makes `__proto__` an own key, which the schemas' records skip without a word
    // (and plain objects would take as a prototype): refused, so nothing is silently dropped.
    if (k === '__proto__') throw invalidRequest(`Field name '__proto__' is not accepted.`, [...path, asWritten(k)]);
    refuseUnstorable(v, [...path, key(k)], depth + 1, key);
  }
}

/**
 * C0 and C1 control characters (tab and line breaks among them), Unicode's line and paragraph
 * separators, and the text-direction controls (embeddings, overrides, isolates, the marks): a
 * right-to-left override shows `invoice\u202egpj.exe` as "invoiceexe.jpg".
 */
// eslint-disable-next-line no-control-regex
const NOT_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** Nothing a reader would see: spaces, zero-width and other format characters only. */
const INVISIBLE = /^[\p{White_Space}\p{Cf}\u115f\u1160\u3164\uffa0]*$/u;

/**
 * A label shown on one line (a key's name, a grant's reason): printable text, no control or
 * direction characters, so it cannot break a log line, a CSV export or a terminal that shows it
 * or read as something else, and at least one character a reader can see.
 */
export function oneLineLabel(schema: z.ZodString): z.ZodString {
  return schema.refine((text) => !NOT_ONE_LINE.test(text) && !INVISIBLE.test(text), {
    message: 'must be one line of printable text with something visible in it (no control characters, line breaks or text-direction controls)',
  });
}
