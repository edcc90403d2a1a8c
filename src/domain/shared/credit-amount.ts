import { z } from 'zod';
import { MICRO_PER_CREDIT } from './money';

/** The ledger keeps integer micro-credits: an amount has at most this many decimal places. */
export const CREDIT_DECIMALS = 6;
const SMALLEST = 1 / MICRO_PER_CREDIT;

/**
 * Decimal places of the shortest decimal spelling of `n` (what JSON or GraphQL carried: JavaScript
 * prints the shortest string that reads back as the same double), e.g. 0.25 → 2, 1e-7 → 7,
 * 1.5e-7 → 8. Reading the double's exact binary value instead would call 0.1 "55 places".
 */
export function decimalPlaces(n: number): number {
  const [mantissa, exponent = '0'] = String(Math.abs(n)).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

/**
 * A credit amount a request carries (a key's daily cap, an operator grant), as exact integer
 * micro-credits. An amount the ledger cannot hold exactly is refused, never rounded: a positive
 * amount below one micro-credit would silently become 0 (a cap of 0 blocks every call), and
 * 1.0000005 would become 1.000001 or 1. Within `max` (≤ 1e9 credits = 1e15 micro < 2^53) and six
 * decimals, `n × 10^6` is within one rounding step of an integer, so Math.round gives it exactly.
 *
 * `sign`: 'positive' (caps) or 'nonzero' (grants, where a negative amount takes credits away).
 */
export function creditAmount(opts: { sign: 'positive' | 'nonzero'; max: number }) {
  return z
    .number()
    .refine((n) => (opts.sign === 'positive' ? n > 0 : n !== 0), opts.sign === 'positive' ? 'must be a positive number of credits' : 'must not be zero')
    .refine((n) => Math.abs(n) <= opts.max, `must be at most ${opts.max.toLocaleString('en-US')} credits`)
    .refine(
      (n) => Math.abs(n) >= SMALLEST,
      `must be at least ${SMALLEST.toFixed(CREDIT_DECIMALS)} credits: the ledger counts millionths of a credit, and this amount would round to zero`,
    )
    .refine(
      (n) => decimalPlaces(n) <= CREDIT_DECIMALS,
      `has more than ${CREDIT_DECIMALS} decimal places: the ledger counts millionths of a credit and does not round`,
    )
    .transform((n) => Math.round(n * MICRO_PER_CREDIT));
}
