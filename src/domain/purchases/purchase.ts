import { z } from 'zod';
import { PageRule } from '../shared/page-rule';
import { integerTextOrNumber } from '../shared/integer-text';
import { parseInput } from '../shared/validate';

/**
 * A purchase of credits: one Stripe Checkout Session, whose id is the purchase's. `pending` from
 * the session's making until it is paid (`completed`: its credits granted), expires or its delayed
 * payment fails; a refund makes it `partially_refunded` or `refunded`.
 */
export type PurchaseStatus = 'pending' | 'completed' | 'partially_refunded' | 'refunded' | 'expired' | 'failed';

export interface Purchase {
  id: string;
  accountId: string;
  /** What the purchase grants (or granted), a member's bonus included. */
  creditsMicro: number;
  amountCents: number;
  status: PurchaseStatus;
  created: Date;
}

/** A Checkout Session's id (`cs_test_…`, `cs_live_…`). */
export const PURCHASE_ID = /^cs_[A-Za-z0-9_]{1,250}$/;

/** The list's page: 20 by default, 100 at most; `after` is the id of the last purchase seen. */
export const PURCHASE_PAGE = new PageRule(100, 20, { pattern: PURCHASE_ID, of: 'a purchase' });

const pageSchema = z.strictObject({
  first: integerTextOrNumber(1, PURCHASE_PAGE.max).default(PURCHASE_PAGE.byDefault),
  after: z.string().regex(PURCHASE_ID, 'must be the id of a purchase (cs_…)').optional(),
});

/** REST's query or GraphQL's arguments, read into a page; a refusal names the argument. */
export const purchasePage = (input: unknown): { first: number; after?: string } => parseInput(pageSchema, input);

export interface PurchasePage {
  purchases: Purchase[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** The status a charge's refunds leave its purchase in. */
export const refundedStatus = (refundedCents: number, amountCents: number): PurchaseStatus =>
  refundedCents >= amountCents ? 'refunded' : 'partially_refunded';

/**
 * What the refunds of a charge take back of its purchase's credits, in all: the refunded share
 * of the charge, rounded down (a full refund takes back all of it).
 */
export function refundDueMicro(creditsMicro: number, refundedCents: number, amountCents: number): number {
  if (amountCents <= 0) return 0;
  const refunded = Math.min(Math.max(refundedCents, 0), amountCents);
  return Number((BigInt(creditsMicro) * BigInt(refunded)) / BigInt(amountCents));
}
