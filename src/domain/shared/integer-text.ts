/**
 * Integers that arrive as text (query parameters, multipart fields): plain decimal digits, with no
 * sign, space, exponent, hex prefix, fraction or leading zero. `Number()` (and so `z.coerce`)
 * reads `0x10`, ` 1`, `1e1` and `04` as integers, so they were taken as if the client had written
 * 16, 1, 10 and 4; one spelling per number leaves nothing for a cache, a log or a proxy to read
 * otherwise.
 */
import { z } from 'zod';

const DECIMAL_INTEGER = /^(?:0|[1-9]\d{0,14})$/;

const rule = (min: number, max: number) => `must be an integer from ${min} to ${max}, written in plain decimal digits`;

/** An integer field of a text-only input (multipart): digits only. */
export function integerText(min: number, max: number) {
  return z.string().regex(DECIMAL_INTEGER, rule(min, max)).transform(Number).pipe(z.number().min(min).max(max).int());
}

/**
 * An integer that a REST query string gives as text and GraphQL as an Int: a number as it is,
 * a string only in plain decimal digits (any other string is refused in the rule's words).
 */
export function integerTextOrNumber(min: number, max: number) {
  return z.preprocess(
    (v) => (typeof v === 'string' && DECIMAL_INTEGER.test(v) ? Number(v) : v),
    z
      .number({ error: rule(min, max) })
      .int()
      .min(min)
      .max(max),
  );
}
